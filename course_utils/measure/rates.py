"""How often something happened over seeds (runs that diverged), with exact intervals and a paired verdict.

A rate over ``n`` seeds is ``k`` events out of ``n`` independent runs. Its interval is the exact
binomial (Clopper–Pearson) interval: it covers the true rate with at least the probability it
states, whatever that rate is, which no normal approximation does at 6 or 12 seeds (and "0 of 6"
still has an upper bound: 46 % at 95 %). Two arms run on the same seeds are compared with the exact
McNemar test: only the seeds where the arms differ carry information, and under "no difference"
each of them goes either way with probability ½. Everything here is a pure function of outcomes,
tested exactly in ``tests/test_rates.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import forcing
from .stats import MIN_SEEDS

if TYPE_CHECKING:
    from ..training.history import History

__all__ = ["HIGHER", "LOWER", "Rate", "RateComparison", "binomial_ci", "compare_rates", "diverged", "mcnemar_p",
           "percent", "rate"]

#: The trick's rate is lower than the baseline's (e.g. fewer runs diverged), beyond chance.
LOWER = "lower"
#: The trick's rate is higher than the baseline's, beyond chance.
HIGHER = "higher"


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed exactly term by term."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return math.fsum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(k + 1))


def _solve(f: Any, target: float) -> float:
    """The p in [0, 1] where the decreasing function ``f(p)`` equals ``target`` (bisection, to 1e-15)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def binomial_ci(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval for a rate of ``k`` events in ``n`` trials.

    The lower end solves P(X ≥ k) = (1 − level)/2, the upper end P(X ≤ k) = (1 − level)/2; 0 and 1
    when ``k`` is 0 or ``n``. It covers the true rate with probability at least ``level`` for every
    rate (conservative: usually more).

    Raises:
        ValueError: ``n`` < 1, ``k`` outside 0 … n, or ``level`` not in (0, 1).
    """
    if isinstance(k, bool) or isinstance(n, bool) or int(k) != k or int(n) != n:
        raise ValueError(f"k and n are counts (whole numbers), got k={k!r}, n={n!r}")
    k, n = int(k), int(n)
    if n < 1:
        raise ValueError(f"a rate needs at least one trial, got n={n}")
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n={n}, got {k}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else _solve(lambda p: _binom_cdf(k - 1, n, p), 1.0 - tail)
    high = 1.0 if k == n else _solve(lambda p: _binom_cdf(k, n, p), tail)
    return low, high


def percent(p: float) -> str:
    """A rate for text, with the digits an interval end needs: ``"8.3 %"``, ``"0.21 %"``, ``"0 %"``.

    One decimal, and two significant digits below 1 % (1 of 12 seeds: 8.3 % [0.21 %, 38.5 %],
    where whole percent printed a false "0 %"); near 100 %, as many decimals as keep it below
    "100.0 %". Exact ends are "0 %" and "100 %".
    """
    if p <= 0.0 or p >= 1.0:
        return f"{p * 100:.0f} %"
    if p < 0.01:
        return f"{p * 100:.{_decimals(p * 100)}f} %"
    text = f"{p * 100:.1f}"
    if text == "100.0":
        text = f"{p * 100:.{_decimals((1.0 - p) * 100)}f}"
    return f"{text} %"


def _decimals(x: float) -> int:
    """Decimals that show two significant digits of ``x`` in (0, 1): 0.21 -> 2, 0.04 -> 3, 0.999 -> 1."""
    return 1 - math.floor(math.log10(float(f"{x:.2g}")))  # 0.00999… rounds to 0.010: 3 decimals


def diverged(history: History, *, num_classes: int) -> bool:
    """Whether a training run diverged: a loss that is not finite, or a final accuracy no better than chance.

    Chance is 1 / ``num_classes``; "no better" means at most 1.5× chance at the last evaluation
    (a run that blew up and left its weights dead, its loss finite again at about ln(classes)).
    Without evaluations only the loss decides.
    """
    if any(not math.isfinite(v) for v in history.loss):
        return True
    final = history.final_accuracy
    return final is not None and final <= 1.5 / num_classes


@dataclass
class Rate:
    """``k`` of ``n`` seeds had the event (``what``, e.g. "diverged"), with the exact binomial interval."""

    label: str
    what: str
    seeds: list[int]
    outcomes: list[bool]
    level: float = 0.95

    @property
    def k(self) -> int:
        """Seeds with the event."""
        return sum(self.outcomes)

    @property
    def n(self) -> int:
        """Seeds run."""
        return len(self.outcomes)

    @property
    def value(self) -> float:
        """The observed rate k / n."""
        return self.k / self.n

    @property
    def ci(self) -> tuple[float, float]:
        """The exact (Clopper–Pearson) interval at ``level``."""
        return binomial_ci(self.k, self.n, self.level)

    @property
    def interval(self) -> str:
        """What kind of interval :attr:`ci` is."""
        return f"exact binomial (Clopper–Pearson) {self.level * 100:.4g} % interval over {self.n} seeds"

    def __str__(self) -> str:
        lo, hi = self.ci
        return (f"{self.label or 'run'}: {self.what} on {self.k} of {self.n} seeds, {percent(self.value)} "
                f"[{percent(lo)}, {percent(hi)}] ({self.interval})")

    def to_dict(self) -> dict[str, Any]:
        """Return the rate as a JSON-serialisable dict (``kind`` = ``"rate"``)."""
        lo, hi = self.ci
        return {"kind": "rate", "label": self.label, "what": self.what, "seeds": list(self.seeds),
                "outcomes": list(self.outcomes), "k": self.k, "n": self.n, "value": self.value,
                "low": lo, "high": hi, "level": self.level, "interval": self.interval}


def rate(outcomes: Sequence[bool], *, what: str, label: str = "", seeds: Sequence[int] | None = None,
         level: float = 0.95) -> Rate:
    """A :class:`Rate` from one outcome per seed (True: the event happened on that seed).

    Raises:
        ValueError: no outcomes, an outcome that is not a bool, or seeds of another length.
    """
    outs = list(outcomes)
    if not outs:
        raise ValueError("a rate needs at least one outcome")
    if not all(isinstance(o, bool) for o in outs):
        raise ValueError(f"outcomes are True/False per seed, got {outs!r}")
    seed_list = list(range(len(outs))) if seeds is None else list(seeds)
    if len(seed_list) != len(outs):
        raise ValueError(f"{len(outs)} outcomes for {len(seed_list)} seeds")
    binomial_ci(0, len(outs), level)  # validates the level
    return Rate(label=label, what=what, seeds=seed_list, outcomes=outs, level=level)


@dataclass
class RateComparison:
    """Two :class:`Rate` on the same seeds, compared seed by seed (exact McNemar test).

    ``only_baseline`` counts the seeds where only the baseline had the event, ``only_trick`` those
    where only the trick had it; ``p_value`` is the exact two-sided McNemar p-value from these
    discordant seeds. Verdict "lower" or "higher" (the trick's rate against the baseline's) when
    ``p_value`` < 1 − ``level``, so a false verdict has probability at most 1 − ``level`` under "no
    difference"; "not resolvable with N seeds" otherwise, and always with fewer than 6 seeds.
    """

    names: tuple[str, str]
    what: str
    seeds: list[int]
    rates: tuple[float, float]
    both: int
    only_baseline: int
    only_trick: int
    neither: int
    p_value: float
    verdict: str
    level: float = 0.95

    def summary(self) -> str:
        """One sentence that claims only what the paired seeds show."""
        base, trick = self.names
        n = len(self.seeds)
        counts = (f"{self.what} on {self.both + self.only_baseline} of {n} seeds for {base}, "
                  f"{self.both + self.only_trick} of {n} for {trick}")
        test = (f"exact McNemar p = {self.p_value:.3g} from the {self.only_baseline + self.only_trick} seeds "
                "where they differ")
        if self.verdict in (LOWER, HIGHER):
            how = "less" if self.verdict == LOWER else "more"
            return f"{trick} {self.what} {how} often than {base}: {counts}; {test}."
        why = (f"a verdict needs at least {MIN_SEEDS} paired seeds" if n < MIN_SEEDS
               else "the arms differed on too few seeds to rule out chance")
        return f"Not resolvable with {n} seeds: {counts}; {test}; {why}."

    def __str__(self) -> str:
        return "\n".join([f"seeds where both {self.what}: {self.both}, only {self.names[0]}: {self.only_baseline}, "
                          f"only {self.names[1]}: {self.only_trick}, neither: {self.neither}",
                          f"verdict     {self.verdict}", self.summary()])

    def __repr__(self) -> str:
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"rate_comparison"``)."""
        return {"kind": "rate_comparison", "names": list(self.names), "what": self.what, "seeds": list(self.seeds),
                "rates": list(self.rates), "both": self.both, "only_baseline": self.only_baseline,
                "only_trick": self.only_trick, "neither": self.neither, "p_value": self.p_value,
                "verdict": self.verdict, "level": self.level, "summary": self.summary(),
                "metric": f"{self.what} rate", "interval": "exact McNemar test over paired seeds"}


def mcnemar_p(only_baseline: int, only_trick: int) -> float:
    """Exact two-sided McNemar p-value: 2·P(B ≤ min) for B ~ Binomial(discordant, ½), at most 1."""
    d = only_baseline + only_trick
    if d == 0:
        return 1.0
    return min(1.0, 2.0 * _binom_cdf(min(only_baseline, only_trick), d, 0.5))


def compare_rates(baseline: Rate, trick: Rate) -> RateComparison:
    """Compare two rates seed by seed (the same seeds, paired); see :class:`RateComparison`.

    Raises:
        ValueError: different seeds, events or levels.
    """
    if baseline.seeds != trick.seeds:
        raise ValueError(f"compare the same seeds: {baseline.seeds} vs {trick.seeds}")
    if baseline.what != trick.what:
        raise ValueError(f"compare the same event: {baseline.what!r} vs {trick.what!r}")
    if baseline.level != trick.level:
        raise ValueError(f"compare at the same level: {baseline.level} vs {trick.level}")
    pairs = list(zip(baseline.outcomes, trick.outcomes))
    both = sum(a and b for a, b in pairs)
    only_b = sum(a and not b for a, b in pairs)
    only_t = sum(b and not a for a, b in pairs)
    p = mcnemar_p(only_b, only_t)
    n = len(pairs)
    if n >= MIN_SEEDS and p < 1.0 - baseline.level:
        verdict = LOWER if only_t < only_b else HIGHER
    else:
        verdict = f"not resolvable with {n} seeds"
    return forcing.apply(RateComparison(  # forced only in a smoke-profile test run
        names=(baseline.label or "baseline", trick.label or "trick"), what=baseline.what,
                          seeds=list(baseline.seeds), rates=(baseline.value, trick.value), both=both,
                          only_baseline=only_b, only_trick=only_t, neither=n - both - only_b - only_t,
                          p_value=p, verdict=verdict, level=baseline.level))

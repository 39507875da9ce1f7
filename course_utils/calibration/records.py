"""What :func:`~course_utils.calibration.runner.calibrate`'s comparisons gave: :class:`Trial`, :class:`WorkloadResult`.

A :class:`Trial` is one comparison as the engine reported it; a :class:`WorkloadResult` holds one
workload's trials, the block times of its arm against itself, and the rates read from them
(false verdicts with exact intervals, skewness of log block times, the carry-over diagnostic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CARRY_WORDS", "LABEL", "LABEL_SIDE", "Trial", "WorkloadResult"]

#: The engine's label: false verdicts in all, and on one side ("faster" or "slower").
LABEL, LABEL_SIDE = 0.05, 0.025
NAN = float("nan")
#: Words of the engine's carry-over warning (any of them marks it).
CARRY_WORDS = ("carry-over", "leaves something behind")


def _num(x: Any) -> float:
    return NAN if x is None else float(x)


@dataclass
class Trial:
    """One comparison, as the engine reported it.

    Its verdict, rounds, speed-up, the arms' median seconds per call, per-round ratios, whether it
    reran (a failed control), the carry-over diagnostic and whether a warning named it.
    """

    verdict: str
    rounds: int
    speedup: float
    median_s: tuple[float, float] = (NAN, NAN)
    ratios: list[float] = field(repr=False, default_factory=list)
    rerun: bool = False
    carry_over: float = NAN
    carry_over_ci: tuple[float, float] = (NAN, NAN)
    carry_warning: bool = False

    @classmethod
    def of(cls, c: Any) -> Trial:
        """What a :class:`~course_utils.measure.comparison.Comparison` records (NaN: the engine has no carry-over)."""
        lo, hi = getattr(c, "carry_over_ci", None) or (NAN, NAN)
        return cls(c.verdict, c.rounds, float(c.speedup), tuple(map(float, c.median_s)),  # type: ignore[arg-type]
                   [float(r) for r in c.ratios], c.first_run is not None, _num(getattr(c, "carry_over", NAN)),
                   (_num(lo), _num(hi)), any(p in w.lower() for w in c.warnings for p in CARRY_WORDS))


def _skew(x: Any) -> float:
    """Sample skewness (Fisher–Pearson, m3 / m2^1.5); NaN below 3 values or without spread."""
    a = np.asarray(x, dtype=float).ravel()
    m2 = float(((a - a.mean()) ** 2).mean()) if a.size >= 3 else 0.0
    return float(((a - a.mean()) ** 3).mean() / m2**1.5) if m2 > 0 else NAN


@dataclass
class WorkloadResult:
    """The comparisons of one workload, and the block times of its arm against itself.

    ``blocks``: per round, seconds per call of identical arms, the baseline's A and A′ first
    (``blocks_from`` says which measurement they come from).
    """

    name: str
    description: str
    true_speedup: float | None
    carry: bool
    budget: float | None
    trials: list[Trial]
    blocks: list[list[float]] = field(repr=False, default_factory=list)
    blocks_from: str = ""
    wall_s: float = NAN

    @property
    def n(self) -> int:
        """Comparisons run."""
        return len(self.trials)

    def count(self, verdict: str) -> int:
        """Comparisons with this verdict (every "not resolvable …" counts as one kind)."""
        from ..measure.stats import verdict_kind

        return sum(verdict_kind(t.verdict) == verdict for t in self.trials)

    @property
    def false(self) -> int | None:
        """"faster" + "slower" verdicts when the arms are equally fast; None when that is not known."""
        return self.count("faster") + self.count("slower") if self.true_speedup == 1.0 else None

    @property
    def flags(self) -> list[str]:
        """Why the workload is flagged: an interval's lower end above the label (5 %; 2.5 % a side)."""
        from ..measure.rates import binomial_ci

        if self.false is None or not self.n:
            return []
        lows = {what: binomial_ci(k, self.n)[0] for what, k in
                (("false verdicts", self.false), ("faster", self.count("faster")), ("slower", self.count("slower")))}
        return [f"{what} at least {low:.1%}" for what, low in lows.items()
                if low > (LABEL if what == "false verdicts" else LABEL_SIDE)]

    @property
    def skewness(self) -> tuple[float, float]:
        """Skewness of log block times: A and A′ pooled over rounds, and within rounds.

        Within rounds: each block's log time minus its round's mean over all the (identical) arms,
        which takes out drift between rounds; NaN with fewer than 3 arms a round.
        """
        if not self.blocks:
            return NAN, NAN
        logs = np.log(np.asarray(self.blocks, dtype=float))
        within = logs - logs.mean(axis=1, keepdims=True) if logs.shape[1] >= 3 else []
        return _skew(logs[:, :2]), _skew(within)

    @property
    def above_one(self) -> float:
        """Share of all per-round speed-up ratios above 1 (0.5 for an unbiased statistic of identical arms)."""
        r = [x for t in self.trials for x in t.ratios]
        return sum(x > 1 for x in r) / len(r) if r else NAN

    @property
    def median_rounds(self) -> float:
        """The median rounds of a comparison."""
        return float(np.median([t.rounds for t in self.trials])) if self.trials else NAN

    def carry_line(self) -> str:
        """One line on a carry-over pair: verdicts, false verdicts where the truth is known, the diagnostic."""
        co = [t.carry_over for t in self.trials if math.isfinite(t.carry_over)]
        out = sum(not lo <= 1.0 <= hi for lo, hi in (t.carry_over_ci for t in self.trials) if math.isfinite(lo))
        diag = (f"median {np.median(co):.3f} [{min(co):.3f}–{max(co):.3f}] over {len(co)}, its interval excludes 1 "
                f"in {out}, warned in {sum(t.carry_warning for t in self.trials)}" if co
                else "not reported (an engine without it, or too few rounds)")
        base, trick = (np.median([t.median_s[i] for t in self.trials]) * 1e6 for i in (0, 1))
        truth = (f"false verdicts {_pct(self.false, self.n)} (median µs per call, baseline {base:.3g}, trick "
                 f"{trick:.3g})" if self.false is not None else "true speed-up not known, so no false-verdict rate")
        s = "s" if self.n != 1 else ""
        return (f"carry-over pair '{self.name}' ({self.description}): {self.n} comparison{s}, faster/slower/not "
                f"resolvable/control failed {self.count('faster')}/{self.count('slower')}/"
                f"{self.count('not resolvable on this hardware')}/{self.count('control failed')}; {truth}; "
                f"carry-over (baseline blocks after the trick / after the baseline): {diag}")


def _pct(k: int, n: int) -> str:
    from ..measure.rates import binomial_ci

    lo, hi = binomial_ci(k, n)
    return f"{k}/{n} = {k / n:.1%} [{lo:.1%}, {hi:.1%}]"

"""What a timing comparison found: :class:`Comparison`, built from per-round times by :func:`analyze`.

:func:`~course_utils.timing.compare` and :func:`~course_utils.sweeps.sweep` measure (the clock);
:func:`analyze` turns the per-round times into the speed-up, its interval, the A/A control and
the verdict (no clock), so the statistics are tested on injected times.

Per round, the baseline's time is the geometric mean of its two copies (A and A′), and the
speed-up is that over the trick's time: both copies serve the comparison, and A/A′ alone is
the control, a bias check at 99 %.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .stats import (
    CONTROL_FAILED,
    CONTROL_LEVEL,
    FASTER,
    SLOWER,
    control_interval,
    median_ci,
    min_rounds,
    order_statistic_ranks,
    runs_test_p,
    verdict,
)
from .units import format_seconds

__all__ = ["Comparison", "analyze", "interval_label", "range_only"]

#: Below this runs-test p-value the per-round ratios are flagged as not independent.
TREND_P = 0.01


def interval_label(level: float, coverage: float) -> str:
    """How the interval of a comparison is described wherever it is shown."""
    return (f"distribution-free {level * 100:.0f} % interval for the median ratio, for independent "
            f"rounds (order statistics; covers {coverage * 100:.1f} %)")



def _ratio(x: float) -> str:
    """A ratio for the table: 3 decimals, or 3 significant digits below 0.01 (a compile: 6.12e-05)."""
    return f"{x:.3g}" if 0 < x < 0.01 else f"{x:.3f}"


def _times(x: float) -> str:
    """How many times the time: 1.39×, 16,400× (no false decimals on a huge ratio)."""
    return f"{x:,.3g}×".replace("e+0", "e") if x >= 1e6 else (f"{x:,.0f}×" if x >= 100 else f"{x:.2f}×")

@dataclass(repr=False)
class Comparison:
    """The result of :func:`~course_utils.timing.compare`. ``speedup`` > 1: the trick is faster.

    ``ci`` is a distribution-free interval for the median per-round ratio (see
    :mod:`course_utils.stats`); ``aa_ci`` the A/A control's (at ``aa_coverage``); ``interval``
    says so in words; ``total_ratio`` is the ratio of total times, beside the median;
    ``first_call_s`` each arm's first, unwarmed call (compilation and autotuning show up there);
    ``warnings`` what the data themselves say about the measurement; ``first_run`` the earlier
    run when a failed control made the comparison run again.
    """

    names: tuple[str, str]
    speedup: float
    ci: tuple[float, float]
    aa_speedup: float
    aa_ci: tuple[float, float]
    verdict: str
    median_s: tuple[float, float]
    cv: tuple[float, float]
    rounds: int
    calls_per_round: int
    num_threads: int
    device: str
    first_call_s: tuple[float, float] = (float("nan"), float("nan"))
    level: float = 0.95
    interval: str = ""
    ratios: list[float] = field(repr=False, default_factory=list)
    aa_ratios: list[float] = field(repr=False, default_factory=list)
    trick_calls_per_round: int | None = None
    total_ratio: float = float("nan")
    aa_coverage: float = float("nan")
    min_effect: float = 1.0
    warnings: list[str] = field(default_factory=list)
    first_run: Comparison | None = field(repr=False, default=None)
    #: How the rounds were run, when not by :func:`~course_utils.timing.compare` (fresh processes).
    method: str = ""

    @property
    def resolved(self) -> bool:
        """True when the data separate the arms (verdict faster or slower)."""
        return self.verdict in (FASTER, SLOWER)

    @property
    def _n_rounds(self) -> str:
        return f"{self.rounds} round{'s' if self.rounds != 1 else ''}"

    @property
    def time_ratio(self) -> float:
        """Trick time over baseline time (2.0: the trick takes twice as long)."""
        return 1.0 / self.speedup

    def summary(self) -> str:
        """One sentence that claims only what the data show (and a note on a rerun)."""
        base, trick = self.names
        lo, hi = self.ci
        ci = f"{self.level * 100:.0f} % interval"
        if self.verdict == FASTER:
            text = f"{trick} is {self.speedup:.2f}× faster than {base} ({ci} {lo:.2f}–{hi:.2f}×)."
        elif self.verdict == SLOWER:
            text = (f"{trick} is slower: it takes {_times(self.time_ratio)} the time of {base} "
                    f"({ci} {_times(1 / hi)[:-1]}–{_times(1 / lo)}).")
        elif self.verdict == CONTROL_FAILED:
            text = (f"Control failed: two identical arms differed ({base} against itself gave "
                    f"{self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}]), an order or "
                    f"drift effect that would bias this comparison ({trick} vs {base} measured "
                    f"{self.speedup:.2f}× [{lo:.2f}, {hi:.2f}]). Run it again on a quieter machine.")
        elif self.verdict.startswith("not resolvable with") and self.speedup < 1:  # too few rounds, slower
            text = (f"{self.verdict.capitalize()}: {trick} took {_times(self.time_ratio)} the time of {base} "
                    f"(range {_times(1 / hi)}–{_times(1 / lo)} over {self._n_rounds}), too few rounds for "
                    "an interval.")
        elif self.verdict.startswith("not resolvable with"):  # too few rounds for any interval
            text = (f"{self.verdict.capitalize()}: {trick} vs {base} measured {self.speedup:.2f}× (range "
                    f"{lo:.2f}–{hi:.2f}× over {self._n_rounds}), too few rounds for an interval.")
        else:
            edge = "" if self.min_effect == 1.0 else f" beyond the declared minimum {self.min_effect:g}×"
            text = (f"Not resolvable on this hardware: {trick} vs {base} measured {self.speedup:.2f}× "
                    f"[{lo:.2f}, {hi:.2f}], an interval that does not exclude 1{edge}.")
        if self.first_run is not None:
            text += (f" (This is a rerun: in the first run the control failed, {self.first_run.aa_speedup:.3f}× "
                     f"[{self.first_run.aa_ci[0]:.3f}, {self.first_run.aa_ci[1]:.3f}], and the trick "
                     f"measured {self.first_run.speedup:.2f}×.)")
        return text

    def _rows(self) -> list[tuple[str, str, str, str]]:
        return [(name, format_seconds(t), f"{cv * 100:.1f} %", "–" if math.isnan(f) else format_seconds(f))
                for name, t, cv, f in zip(self.names, self.median_s, self.cv, self.first_call_s)]

    def _footer(self) -> str:
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        calls = self.calls_per_round if self.trick_calls_per_round in (None, self.calls_per_round) \
            else f"{self.calls_per_round} / {self.trick_calls_per_round}"
        how = self.method or (f"interleaved rounds (random Latin-square orders, one untimed call "
                              f"before each block) × {calls} call(s) per arm, {threads}")
        aa = "" if math.isnan(self.aa_coverage) else f"; A/A control: {self.aa_coverage * 100:.1f} % interval"
        return (f"{self.rounds} {how}, {self.device}; speed-up = "
                f"median of per-round baseline/trick ratios (baseline: both copies); {self.interval}{aa}")

    def lines(self) -> list[str]:
        """The printed table, line by line."""
        width = max(len(n) for n in self.names) + 2
        out = [f"{'arm':<{width}}{'median time':>14}{'spread (CV)':>14}{'first call':>14}"]
        out += [f"{n:<{width}}{t:>14}{cv:>14}{f:>14}" for n, t, cv, f in self._rows()]
        out += [
            f"speed-up      {_ratio(self.speedup)}× [{_ratio(self.ci[0])}, {_ratio(self.ci[1])}]"
            f"   (ratio of total times {_ratio(self.total_ratio)}×)",
            f"A/A control   {self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}]",
            f"verdict       {self.verdict}",
            self.summary(),
            *(f"warning: {w}" for w in self.warnings),
            self._footer(),
        ]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{n}</td><td>{t}</td><td>{cv}</td><td>{f}</td></tr>"
                       for n, t, cv, f in self._rows())
        warn = "".join(f"<p>⚠ {w}</p>" for w in self.warnings)
        return (
            "<table><thead><tr><th>arm</th><th>median time</th><th>spread (CV)</th>"
            f"<th>first call</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p><b>speed-up</b> {self.speedup:.3f}× [{self.ci[0]:.3f}, {self.ci[1]:.3f}] "
            f"(ratio of total times {self.total_ratio:.3f}×) · "
            f"<b>A/A control</b> {self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}] · "
            f"<b>verdict</b> {self.verdict}</p><p>{self.summary()}</p>{warn}<p><small>{self._footer()}</small></p>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"comparison"``)."""
        d = asdict(self)
        d["kind"] = "comparison"
        d["summary"] = self.summary()
        d["first_run"] = self.first_run.to_dict() if self.first_run is not None else None
        for k in ("total_ratio", "aa_coverage"):
            if not math.isfinite(d[k]):
                d[k] = None
        return d

    def to_json(self) -> str:
        """Return :meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        """Rebuild a comparison saved with :meth:`to_dict` (also one saved by an older version)."""
        kw = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        for k in ("names", "ci", "aa_ci", "median_s", "cv", "first_call_s"):
            if k in kw:
                kw[k] = tuple(kw[k])
        for k in ("total_ratio", "aa_coverage"):
            if kw.get(k) is None:
                kw.pop(k, None)
        if kw.get("first_run") is not None:
            kw["first_run"] = cls.from_dict(kw["first_run"])
        return cls(**kw)

    def per_item(self, items: tuple[float, float], unit: str = "example") -> Comparison:
        """The same comparison per item, when the arms process different amounts per call.

        For a baseline step on ``items[0]`` examples and a trick step on ``items[1]``, the result
        compares time per example (the speed-up becomes the ratio of examples per second). The
        A/A control is unchanged, and the verdict is recomputed.
        """
        if items[0] <= 0 or items[1] <= 0:
            raise ValueError(f"items must be positive, got {items}")
        r = items[1] / items[0]
        ci = (self.ci[0] * r, self.ci[1] * r)
        return dataclasses.replace(
            self,
            names=(f"{self.names[0]}, per {unit}", f"{self.names[1]}, per {unit}"),
            speedup=self.speedup * r,
            ci=ci,
            verdict=verdict(ci, self.aa_ci, min_effect=self.min_effect),
            median_s=(self.median_s[0] / items[0], self.median_s[1] / items[1]),
            first_call_s=(self.first_call_s[0] / items[0], self.first_call_s[1] / items[1]),
            ratios=[x * r for x in self.ratios],
            total_ratio=self.total_ratio * r,
            warnings=_warnings(np.asarray(self.ratios) * r, ci, self.total_ratio * r, self.rounds, self.level),
        )


def _warnings(ratios: np.ndarray, ci: tuple[float, float], total: float, rounds: int, level: float) -> list[str]:
    """What the rounds themselves say about the measurement (not about the trick)."""
    out = []
    if rounds <= min_rounds(level):
        out.append(f"only the minimum {rounds} rounds ran, so the interval is the range of all of "
                   "them: give the comparison more time (budget=) for a narrower one")
    p = runs_test_p(np.log(ratios))
    if p < TREND_P:
        out.append(f"the per-round ratios drift or come in streaks (runs test p = {p:.3f}): the interval "
                   "assumes independent rounds and may cover less than it says; rerun on a quieter machine")
    if math.isfinite(total) and not ci[0] <= total <= ci[1]:
        out.append(f"the ratio of total times ({total:.3f}×) lies outside the interval of the median ratio: "
                   "some rounds stalled, and the median hides them")
    return out


def analyze(
    baseline: Sequence[float],
    control: Sequence[float],
    trick: Sequence[float],
    *,
    names: tuple[str, str] = ("baseline", "trick"),
    level: float = 0.95,
    first_call_s: tuple[float, float] = (float("nan"), float("nan")),
    calls_per_round: int = 1,
    trick_calls_per_round: int | None = None,
    num_threads: int = 1,
    device: str = "cpu",
    min_effect: float = 1.0,
) -> Comparison:
    """Turn per-round times of the three arms into a :class:`Comparison` (no clock involved).

    Args:
        baseline: seconds per call of the baseline, one value per round.
        control: the baseline's second copy in the same rounds (the A/A control).
        trick: the trick's seconds per call in the same rounds.
        names: display names of baseline and trick.
        level: coverage of the speed-up's interval (the control's is 99 % where rounds allow).
        first_call_s: each arm's first call, for the record.
        calls_per_round: calls of the baseline per round, for the record.
        trick_calls_per_round: calls of the trick per round, for the record (default: the same).
        num_threads: torch threads during the measurement, for the record.
        device: the device measured, for the record.
        min_effect: a declared minimum speed-up worth a verdict (1.0: any effect the interval shows).

    Returns:
        The comparison. Per-round ratios make slow drift cancel: rounds that all take twice as
        long as the one before, with the trick always twice as fast, give exactly 2.0.

    Raises:
        ValueError: the three lists differ in length, hold a non-positive time, or are too
            short for an interval at ``level``.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    if not a.size == a2.size == b.size:
        raise ValueError(f"every arm needs one time per round, got {a.size}, {a2.size}, {b.size}")
    if min(a.min(initial=1.0), a2.min(initial=1.0), b.min(initial=1.0)) <= 0:
        raise ValueError("times must be positive")
    _, _, coverage = order_statistic_ranks(a.size, level)
    ratios, aa_ratios = np.sqrt(a * a2) / b, a / a2
    ci = median_ci(ratios, level)
    aa_ci, aa_coverage = control_interval(aa_ratios, CONTROL_LEVEL)
    total = float((a.sum() + a2.sum()) / 2.0 / b.sum())
    base_all = np.concatenate([a, a2])
    return Comparison(
        names=tuple(names),  # type: ignore[arg-type]
        speedup=float(np.median(ratios)),
        ci=ci,
        aa_speedup=float(np.median(aa_ratios)),
        aa_ci=aa_ci,
        verdict=verdict(ci, aa_ci, min_effect=min_effect),
        median_s=(float(np.median(base_all)), float(np.median(b))),
        cv=(float(base_all.std() / base_all.mean()), float(b.std() / b.mean())),
        rounds=int(a.size),
        calls_per_round=calls_per_round,
        trick_calls_per_round=trick_calls_per_round if trick_calls_per_round is not None else calls_per_round,
        num_threads=num_threads,
        device=device,
        first_call_s=tuple(float(f) for f in first_call_s),  # type: ignore[arg-type]
        level=level,
        interval=interval_label(level, coverage),
        ratios=ratios.tolist(),
        aa_ratios=aa_ratios.tolist(),
        total_ratio=total,
        aa_coverage=aa_coverage,
        min_effect=min_effect,
        warnings=_warnings(ratios, ci, total, int(a.size), level),
    )


def range_only(baseline: Sequence[float], control: Sequence[float], trick: Sequence[float], *,
               names: tuple[str, str], rounds_word: str, level: float = 0.95, method: str = "",
               device: str = "cpu") -> Comparison:
    """Fewer rounds than an interval at ``level`` needs: the range of the ratios, and no verdict.

    ``rounds_word`` names a round in the verdict and warning ("rounds of processes", "seeds"):
    the verdict reads "not resolvable with 3 seeds". Infinite times (a run that never got there)
    give ratios of 0 or infinity; nothing is summed.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratios, aa = np.sqrt(a * a2) / b, a / a2
        base_all = np.concatenate([a, a2])
        n, need = int(a.size), min_rounds(level)
        return Comparison(
            names=tuple(names), speedup=float(np.median(ratios)),  # type: ignore[arg-type]
            ci=(float(ratios.min()), float(ratios.max())), aa_speedup=float(np.median(aa)),
            aa_ci=(float(aa.min()), float(aa.max())), verdict=f"not resolvable with {n} {rounds_word}",
            median_s=(float(np.median(base_all)), float(np.median(b))),
            cv=(float(base_all.std() / base_all.mean()), float(b.std() / b.mean())), rounds=n, calls_per_round=1,
            num_threads=1, device=device, level=level,
            interval=f"range of {n} {rounds_word}: too few for an interval (a {level:.0%} interval needs {need})",
            ratios=ratios.tolist(), aa_ratios=aa.tolist(), total_ratio=float(base_all.sum() / 2 / b.sum()),
            warnings=[f"only {n} {rounds_word}: no verdict (run at least {need})"], method=method)

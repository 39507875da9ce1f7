"""What :func:`~course_utils.measure.convergence.compare_targets` returns, and the words it prints.

A :class:`TargetComparison` holds two time-to-target results compared seed by seed: the per-seed
steps ratios, the interval the verdict reads, and the verdict. Its text claims only what the
seeds (and the interleaved step-time interval) show. It is re-exported by
:mod:`course_utils.measure.convergence`, where it is built; ``cu.TargetComparison`` is the one public name.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from . import wording
from .stats import CONTROL_FAILED, FASTER, MIN_SEEDS, SLOWER, min_rounds

__all__ = ["TargetComparison"]


@dataclass
class TargetComparison:
    """Two time-to-target results compared seed by seed. ``ratio`` > 1: the trick gets there sooner.

    ``steps_ratios`` are baseline steps / trick steps per seed; ``step_speedup`` and ``step_ci``
    the interleaved step-time comparison's speed-up and interval (1.0 and (1, 1) when only steps
    are compared, ``metric`` then says so). ``ratio`` is the median steps ratio × ``step_speedup``;
    ``low`` and ``high`` are the order statistics of the steps ratios that make a ``level``
    interval for their median (ranks k and n−k+1 of n: [min, max] at 6 seeds, ranks 3 and 10 at
    12), times ``step_ci[0]`` and ``step_ci[1]``: the interval the verdict reads (``interval``
    names its ranks and coverage). With fewer than 6 seeds the verdict is "not resolvable with N
    seeds".
    """

    names: tuple[str, str]
    target: float
    seeds: list[int]
    ratios: list[float]
    ratio: float
    low: float
    high: float
    steps: tuple[list[float | None], list[float | None]]
    step_time: tuple[float, float]
    verdict: str
    steps_ratios: list[float]
    step_speedup: float = 1.0
    step_ci: tuple[float, float] = (1.0, 1.0)
    step_basis: str = ""
    metric: str = "time to target"
    interval: str = ""
    level: float = 0.95

    @property
    def tie(self) -> bool:
        """True when both arms took the same steps on every seed."""
        return bool(self.steps_ratios) and all(r == 1.0 for r in self.steps_ratios)

    def ratio_text(self) -> str:
        """``"1.77× [1.20, 2.31] (faster)"``: ratio, seed interval and verdict."""
        return wording.ratio_text(self)

    def seed_counts(self) -> tuple[int, int, int, int]:
        """``(fewer, tied, more, missing)`` seeds in steps (:func:`~course_utils.measure.wording.seed_counts`)."""
        return wording.seed_counts(self)

    def per_seed(self) -> str:
        """The per-seed wins, ties and losses in steps, as a clause built from the counts."""
        return wording.per_seed(self)

    def per_seed_text(self) -> str:
        """Each seed's ratio in seed order: ``"1.31×, 0.96×, ∞ (∞: only <trick> got there)"``.

        The ratios the verdict reads (time, or steps when only steps are compared), one by one; a
        seed where only one arm reached the target reads ∞ or 0, and one where neither did n/a,
        each explained once at the end. :meth:`per_seed` counts the seeds instead.
        """
        base, trick = self.names
        marks = {"∞": f"only {trick} got there", "0": f"only {base} got there", "n/a": "neither got there"}

        def one(r: float) -> str:
            return "n/a" if math.isnan(r) else "∞" if math.isinf(r) else "0" if r == 0 else f"{r:.2f}×"

        shown = [one(r) for r in self.ratios]
        legend = [f"{mark}: {what}" for mark, what in marks.items() if mark in shown]
        return ", ".join(shown) + (f" ({'; '.join(legend)})" if legend else "")

    def carried_by(self) -> str:
        """"steps", "step time", "both" or "neither": which factor alone sets the verdict's side."""
        return wording.carried_by(self)

    def basis(self) -> str:
        """A sentence when the step-time interval alone set the verdict's side, else ""."""
        return wording.basis(self)

    def summary(self) -> str:
        """One sentence that claims only what the seeds (and the step-time interval) show."""
        base, trick = self.names
        n = len(self.seeds)
        rng = f"{_range_text(self.low, self.high)} over {n} paired seeds"
        what = "in fewer steps" if self.metric == "steps to target" else "sooner"
        one_arm = bool(self.steps_ratios) and (all(r == 0 for r in self.steps_ratios)
                                               or all(math.isinf(r) for r in self.steps_ratios))
        if self.verdict in (FASTER, SLOWER) and one_arm:  # every seed: only one arm got there
            slow = self.verdict == SLOWER
            never, got = (trick, base) if slow else (base, trick)
            return (f"{never} never reached {self.target:.0%} on any of the {n} paired seeds; {got} reached "
                    "it on every one, so there is no ratio to give: the verdict counts a run that never got "
                    "there as infinitely slow.")
        if self.verdict == FASTER:
            return f"{trick} reached {self.target:.0%} {what} than {base}: {_ratio_text(self.ratio)} {rng}."
        if self.verdict == SLOWER:
            later = "in more steps" if self.metric == "steps to target" else "later"
            return f"{trick} reached {self.target:.0%} {later} than {base}: {_ratio_text(self.ratio)} {rng}."
        if self.verdict == CONTROL_FAILED:
            return (f"Control failed in the step-time comparison (two identical arms differed), so the "
                    f"time to {self.target:.0%} cannot be compared; steps ratio per seed "
                    f"{_ratio_text(min(self.steps_ratios))}–{_ratio_text(max(self.steps_ratios))}.")
        need = seeds_needed(self.level)
        if n < need:
            why = f"a seed-level verdict needs at least {need} paired seeds"
            if need > MIN_SEEDS:
                why += f" at {_percent(self.level)}"
        elif all(math.isnan(r) for r in self.steps_ratios):
            return (f"{self.verdict.capitalize()}: neither {base} nor {trick} reached {self.target:.0%} on any of "
                    f"the {n} paired seeds.")
        elif self.tie:
            why = "a tie: both took the same steps on every seed"
        elif any(math.isnan(r) for r in self.steps_ratios):
            why = "on some seeds neither arm got there"
        else:
            why = "the interval includes 1"
        return (f"{self.verdict.capitalize()}: {trick} vs {base} to {self.target:.0%} measured "
                f"{_ratio_text(self.ratio)} {rng}; {why}.")

    def __str__(self) -> str:
        def row(name: str, steps: list[float | None]) -> str:
            return f"{name}: steps per seed " + ", ".join("never" if s is None else f"{s:.0f}" for s in steps)

        one_arm = self.steps_ratios and (all(r == 0 for r in self.steps_ratios)
                                         or all(math.isinf(r) for r in self.steps_ratios))
        got = self.names[0] if one_arm and self.steps_ratios[0] == 0 else self.names[1]
        ratio = (f"{self.metric} ratio: none, only {got} got there (a run that never did counts as infinitely slow)"
                 if one_arm else
                 f"{self.metric} ratio {_ratio_text(self.ratio)} {_range_text(self.low, self.high)} ({self.interval})")
        return "\n".join([row(self.names[0], self.steps[0]), row(self.names[1], self.steps[1]), ratio,
                          f"step time: {self.step_basis}",
                          f"verdict     {self.verdict}", self.summary()])

    def __repr__(self) -> str:
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"target_comparison"``)."""
        d = asdict(self)
        finite = lambda x: x if math.isfinite(x) else str(x)  # noqa: E731 - JSON has no inf/nan
        d.update(kind="target_comparison", summary=self.summary(), ratios=[finite(r) for r in self.ratios],
                 steps_ratios=[finite(r) for r in self.steps_ratios],
                 ratio=finite(self.ratio), low=finite(self.low), high=finite(self.high))
        return d


def seeds_needed(level: float) -> int:
    """Paired seeds a seed-level verdict needs at ``level``: 6, or more where ``level`` asks for more."""
    return max(MIN_SEEDS, min_rounds(level))


def _ratio_text(x: float) -> str:
    """A time-to-target ratio for text: ``"1.77×"``, or what an infinite or zero ratio means."""
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞× (only the trick got there)"
    if x == 0:
        return "0× (only the baseline got there)"
    return f"{x:.2f}×"


def _percent(p: float, *, at_least: bool = False) -> str:
    """A coverage for text: ``"96.9 %"``, and ``"99.95 %"`` rather than a rounded ``"100.0 %"`` below 1.

    ``at_least``: a lower bound, rounded down (91.875 % is "at least 91.8 %", not 91.9 %).
    """
    text = f"{math.floor(p * 1000 + 1e-9) / 10:.1f}" if at_least else f"{p * 100:.1f}"
    if text == "100.0" and p < 1.0:
        text = f"{math.floor(p * 1e4) / 100:.2f}"
    return f"{text} %"


def _range_text(low: float, high: float) -> str:
    """The seed interval for text: ``"[0.75×, 1.38×]"``, said once when only one arm ever got there."""
    if low == high and (low == 0 or math.isinf(low)):
        return f"[{low:g}×, {high:g}×]"
    return f"[{_ratio_text(low)}, {_ratio_text(high)}]"

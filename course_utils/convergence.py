"""Time to a target accuracy over seeds, and a seed-level comparison of two such results.

Tricks that change convergence (LR schedule, batch size, optimizer, clipping, normalisation) are
measured as time to target = steps to target (over seeds) × measured step time. With 3–5 seeds
there is no honest 95 % interval: :class:`TargetComparison` reports the *range over seeds* and a
seed-level verdict (the trick wins on every seed, loses on every seed, or neither), and says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .comparison import Comparison, format_seconds
from .env import seed_everything

if TYPE_CHECKING:
    from .training import History

__all__ = ["TargetComparison", "TargetResult", "compare_targets", "steps_to_target"]

SEED_INTERVAL = "range over seeds (not a confidence interval)"


@dataclass
class TargetResult:
    """Steps (and time) to a target accuracy over several seeds."""

    label: str
    target: float
    seeds: list[int]
    steps: list[int | None]
    step_time: float

    @property
    def reached(self) -> int:
        """How many seeds reached the target."""
        return sum(s is not None for s in self.steps)

    @property
    def median_steps(self) -> float | None:
        """Median steps to target; unreached seeds count as infinite. None if most never reached."""
        vals = sorted(float("inf") if s is None else s for s in self.steps)
        med = statistics.median(vals)
        return None if med == float("inf") or math.isnan(med) else med

    @property
    def time_to_target(self) -> float | None:
        """Median steps to target × the measured step time, in seconds."""
        med = self.median_steps
        return None if med is None else med * self.step_time

    def __str__(self) -> str:
        per_seed = ", ".join("never" if s is None else str(s) for s in self.steps)
        med = self.median_steps
        if med is None:
            return (f"{self.label}: most seeds never reached {self.target:.0%} "
                    f"(steps per seed: {per_seed})")
        return (f"{self.label}: {med:g} steps to {self.target:.0%} (median of {len(self.seeds)} "
                f"seeds; per seed: {per_seed}) ≈ {format_seconds(self.time_to_target or 0)} "
                f"at {format_seconds(self.step_time)} per step")

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-serialisable dict (``kind`` = ``"target"``)."""
        return {"kind": "target", **asdict(self), "median_steps": self.median_steps,
                "time_to_target": self.time_to_target}


def steps_to_target(run: Callable[[int], History], target: float, *, seeds: Sequence[int] = (0, 1, 2),
                    label: str = "", step_time: float | None = None) -> TargetResult:
    """Run ``run(seed)`` for every seed and collect the steps to ``target`` accuracy.

    Each run starts from :func:`~course_utils.env.seed_everything` (so model init follows the
    seed) and should call :func:`~course_utils.training.train` with ``eval_every`` and ``target``.

    Args:
        run: builds a model and trains it for one seed, returning the History.
        target: the test accuracy to reach.
        seeds: at least 3 seeds, since single runs are noise.
        label: a name for the printout.
        step_time: seconds per step to convert steps into time, best measured interleaved with
            :func:`~course_utils.timing.compare`; by default the median of the runs' own step
            times, which drift with machine load.

    Returns:
        A :class:`TargetResult` with the steps per seed and the step time.
    """
    if len(seeds) < 1:
        raise ValueError("steps_to_target needs at least one seed")
    steps: list[int | None] = []
    times: list[float] = []
    for seed in seeds:
        seed_everything(seed)
        hist = run(seed)
        steps.append(hist.steps_to(target))
        times.extend(hist.step_time)
    return TargetResult(label=label, target=target, seeds=list(seeds), steps=steps,
                        step_time=step_time if step_time is not None else statistics.median(times))


def _seed_ratio(base: int | None, trick: int | None, time_factor: float) -> float:
    """Baseline time to target / trick time to target for one seed (inf: only the trick got there)."""
    if base is None and trick is None:
        return math.nan
    if trick is None:
        return 0.0
    if base is None:
        return math.inf
    return base / trick * time_factor


@dataclass
class TargetComparison:
    """Two :class:`TargetResult` compared seed by seed. ``ratio`` > 1: the trick gets there sooner.

    ``ratio`` is the median over seeds of baseline time to target / trick time to target (per
    seed: steps ratio × ``step_factor``, explained in ``step_basis``); ``low`` and ``high`` are the smallest and largest
    per-seed ratios: a range over seeds, not a confidence interval. The verdict is "faster" or
    "slower" only when every seed agrees.
    """

    names: tuple[str, str]
    target: float
    seeds: list[int]
    ratios: list[float]
    ratio: float
    low: float
    high: float
    steps: tuple[list[int | None], list[int | None]]
    step_time: tuple[float, float]
    verdict: str
    step_factor: float = 1.0
    step_basis: str = ""
    interval: str = SEED_INTERVAL

    def summary(self) -> str:
        """One sentence that claims only what the seeds show."""
        base, trick = self.names
        n = len(self.seeds)
        rng = f"{_ratio_text(self.low)}–{_ratio_text(self.high)} over {n} seeds"
        if self.verdict == "faster":
            how = (f"{self.ratio:.2f}× sooner than {base}" if math.isfinite(self.ratio)
                   else f"while {base} mostly never did")
            return f"{trick} reached {self.target:.0%} {how} on every seed ({rng})."
        if self.verdict == "slower":
            return f"{trick} reached {self.target:.0%} later than {base} on every seed ({rng})."
        return (f"Not resolvable with {n} seeds: {trick} vs {base} to {self.target:.0%} ranged "
                f"{rng}; the seeds disagree or some never got there.")

    def __str__(self) -> str:
        def row(name: str, steps: list[int | None], st: float) -> str:
            per = ", ".join("never" if s is None else str(s) for s in steps)
            return f"{name}: steps per seed {per}; step time {format_seconds(st)}"

        return "\n".join([row(self.names[0], self.steps[0], self.step_time[0]),
                          row(self.names[1], self.steps[1], self.step_time[1]),
                          f"time-to-target ratio {_ratio_text(self.ratio)} [{_ratio_text(self.low)}, "
                          f"{_ratio_text(self.high)}] "
                          f"({self.interval}); {self.step_basis}",
                          f"verdict     {self.verdict}", self.summary()])

    def __repr__(self) -> str:
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"target_comparison"``)."""
        d = asdict(self)
        finite = lambda x: x if math.isfinite(x) else str(x)  # noqa: E731 - JSON has no inf/nan
        d.update(kind="target_comparison", summary=self.summary(), ratios=[finite(r) for r in self.ratios],
                 ratio=finite(self.ratio), low=finite(self.low), high=finite(self.high))
        return d


def _ratio_text(x: float) -> str:
    """A time-to-target ratio for text: ``"1.77×"``, or what an infinite or zero ratio means."""
    if math.isinf(x):
        return "∞× (only the trick got there)"
    if x == 0:
        return "0× (only the baseline got there)"
    return f"{x:.2f}×"


def compare_targets(baseline: TargetResult, trick: TargetResult, *,
                    step_comparison: Comparison | None = None) -> TargetComparison:
    """Compare two time-to-target results seed by seed (the same seeds, paired).

    Time to target = steps × step time. The step-time factor comes from ``step_comparison``
    when given (an interleaved :func:`~course_utils.timing.compare` of the two arms' steps): its
    speed-up when its verdict is "faster" or "slower", else 1.0, since step times the machine
    could not tell apart must not let noise decide the verdict. Without it, the factor is the
    ratio of the two results' ``step_time`` values.

    Args:
        baseline: the plain run.
        trick: the run with the trick, over the same seeds and target.
        step_comparison: baseline step vs trick step, measured interleaved.

    Returns:
        A :class:`TargetComparison` with a seed-level verdict: "faster" when the trick reached
        the target sooner on every seed, "slower" when later on every seed, else "not resolvable
        with N seeds" (ties, disagreeing seeds, or seeds where neither arm got there).

    Raises:
        ValueError: the two results were run on different seeds or targets.
    """
    if baseline.seeds != trick.seeds:
        raise ValueError(f"compare the same seeds: {baseline.seeds} vs {trick.seeds}")
    if baseline.target != trick.target:
        raise ValueError(f"compare the same target: {baseline.target} vs {trick.target}")
    if step_comparison is not None:
        factor = step_comparison.speedup if step_comparison.resolved else 1.0
        basis = (f"step times from an interleaved comparison: {step_comparison.verdict}"
                 + (f", {factor:.3g}×" if step_comparison.resolved else ", counted as equal"))
    else:
        factor = baseline.step_time / trick.step_time
        basis = "step times: the ratio of the two results' step_time"
    ratios = [_seed_ratio(b, t, factor) for b, t in zip(baseline.steps, trick.steps)]
    known = [r for r in ratios if not math.isnan(r)]
    ratio = statistics.median(known) if known else math.nan
    if known and len(known) == len(ratios) and all(r > 1 for r in ratios):
        verdict = "faster"
    elif known and len(known) == len(ratios) and all(r < 1 for r in ratios):
        verdict = "slower"
    else:
        verdict = f"not resolvable with {len(ratios)} seeds"
    return TargetComparison(
        names=(baseline.label or "baseline", trick.label or "trick"), target=baseline.target,
        seeds=list(baseline.seeds), ratios=ratios, ratio=ratio,
        low=min(known) if known else math.nan, high=max(known) if known else math.nan,
        steps=(list(baseline.steps), list(trick.steps)),
        step_time=(baseline.step_time, trick.step_time), verdict=verdict, step_factor=factor,
        step_basis=basis)

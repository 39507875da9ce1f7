"""Time to a target accuracy over seeds, and a seed-level comparison of two such results.

Tricks that change convergence (LR schedule, batch size, optimizer, clipping, normalisation) are
measured as time to target = steps to target × step time. Steps come from paired seeds (the same
seed gives both arms the same initial weights and batches); the crossing of the target is
interpolated between evaluations, so the evaluation grid does not decide. With at least 6 seeds
the [min, max] of the per-seed steps ratios is a distribution-free interval for their median
(coverage 1 − 2^(1−n): 96.9 % at 6); it is combined with the *interleaved* step-time interval
(:func:`~course_utils.timing.compare`), never with step times from separate runs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .comparison import Comparison
from .env import seed_everything
from .stats import CONTROL_FAILED, FASTER, MIN_SEEDS, SLOWER, seed_coverage
from .units import format_seconds

if TYPE_CHECKING:
    from .training import History

__all__ = ["TargetComparison", "TargetResult", "compare_targets", "crossing_step", "steps_to_target"]


def crossing_step(eval_step: Sequence[float], eval_accuracy: Sequence[float], target: float) -> float | None:
    """The step at which accuracy first reached ``target``, interpolated between evaluations.

    Linear between the last evaluation below the target and the first at or above it, so two
    runs that cross between the same two evaluations are not made equal by the grid. A target
    reached at the first evaluation is that evaluation's step. None if never reached.
    """
    prev: tuple[float, float] | None = None
    for step, acc in zip(eval_step, eval_accuracy):
        if acc >= target:
            if prev is None or acc == prev[1]:
                return float(step)
            s0, a0 = prev
            return float(s0 + (target - a0) / (acc - a0) * (step - s0))
        prev = (float(step), float(acc))
    return None


@dataclass
class TargetResult:
    """Steps (and time) to a target accuracy over several seeds.

    ``steps`` are interpolated crossings (see :func:`crossing_step`), None where a seed never got
    there; ``step_time`` is the step time the printout multiplies by, and ``step_basis`` where it
    came from: "these runs' own clock" (the median of the runs' own step times, which differ
    between arms run one after the other, so never a comparison), or the interleaved comparison
    it was given from. A verdict always uses an interleaved step-time comparison instead.
    """

    label: str
    target: float
    seeds: list[int]
    steps: list[float | None]
    step_time: float
    step_basis: str = "these runs' own clock"

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
        """Median steps to target × these runs' own step time, in seconds (for the printout)."""
        med = self.median_steps
        return None if med is None else med * self.step_time

    def __str__(self) -> str:
        per_seed = ", ".join("never" if s is None else f"{s:.0f}" for s in self.steps)
        med = self.median_steps
        if med is None:
            never = sum(s is None for s in self.steps)
            return (f"{self.label}: {never} of {len(self.steps)} seeds never reached {self.target:.0%} "
                    f"(steps per seed: {per_seed})")
        return (f"{self.label}: {med:.0f} steps to {self.target:.0%} (median of {len(self.seeds)} "
                f"seeds; per seed: {per_seed}) ≈ {format_seconds(self.time_to_target or 0)} "
                f"at {format_seconds(self.step_time)} per step ({self.step_basis})")

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-serialisable dict (``kind`` = ``"target"``)."""
        return {"kind": "target", **asdict(self), "median_steps": self.median_steps,
                "time_to_target": self.time_to_target}


def steps_to_target(run: Callable[[int], History], target: float, *, seeds: Sequence[int] = tuple(range(MIN_SEEDS)),
                    label: str = "", step_time: float | None = None,
                    step_basis: str | None = None) -> TargetResult:
    """Run ``run(seed)`` for every seed and collect the (interpolated) steps to ``target`` accuracy.

    Each run starts from :func:`~course_utils.env.seed_everything` (so model init follows the
    seed) and should call :func:`~course_utils.training.train` with ``eval_every`` and ``target``.

    Args:
        run: builds a model and trains it for one seed, returning the History.
        target: the test accuracy to reach.
        seeds: the seeds; a seed-level verdict needs at least 6 (the default), paired between arms.
        label: a name for the printout.
        step_time: seconds per step for the printout, best taken from an interleaved comparison
            (``sweep.median_s(arm)`` or ``comparison.median_s``); by default the median of the
            runs' own step times, which are not comparable between arms run one after the
            other. Verdicts never use it (see :func:`compare_targets`).
        step_basis: where ``step_time`` came from, for the printout ("interleaved comparison"
            when ``step_time`` is given without it).

    Returns:
        A :class:`TargetResult` with the steps per seed and the step time.
    """
    if len(seeds) < 1:
        raise ValueError("steps_to_target needs at least one seed")
    steps: list[float | None] = []
    times: list[float] = []
    for seed in seeds:
        seed_everything(seed)
        hist = run(seed)
        steps.append(crossing_step(hist.eval_step, hist.eval_accuracy, target))
        times.extend(hist.step_time)
    if step_time is None:
        return TargetResult(label=label, target=target, seeds=list(seeds), steps=steps,
                            step_time=statistics.median(times))
    return TargetResult(label=label, target=target, seeds=list(seeds), steps=steps, step_time=step_time,
                        step_basis=step_basis or "interleaved comparison")


def _seed_ratio(base: float | None, trick: float | None) -> float:
    """Baseline steps / trick steps for one seed (inf: only the trick got there; nan: neither)."""
    if base is None and trick is None:
        return math.nan
    if trick is None:
        return 0.0
    if base is None:
        return math.inf
    return base / trick


@dataclass
class TargetComparison:
    """Two :class:`TargetResult` compared seed by seed. ``ratio`` > 1: the trick gets there sooner.

    ``steps_ratios`` are baseline steps / trick steps per seed; ``step_speedup`` and ``step_ci``
    the interleaved step-time comparison's speed-up and interval (1.0 and (1, 1) when only steps
    are compared, ``metric`` then says so). ``ratio`` is the median steps ratio × ``step_speedup``;
    ``low`` = min steps ratio × ``step_ci[0]`` and ``high`` = max × ``step_ci[1]``: the interval
    the verdict reads (``interval`` names its coverage). With fewer than 6 seeds the verdict is
    "not resolvable with N seeds".
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

    @property
    def tie(self) -> bool:
        """True when both arms took the same steps on every seed."""
        return bool(self.steps_ratios) and all(r == 1.0 for r in self.steps_ratios)

    def summary(self) -> str:
        """One sentence that claims only what the seeds (and the step-time interval) show."""
        base, trick = self.names
        n = len(self.seeds)
        rng = f"{_range_text(self.low, self.high)} over {n} paired seeds"
        what = "in fewer steps" if self.metric == "steps to target" else "sooner"
        if self.verdict in (FASTER, SLOWER) and (self.low == self.high == 0 or math.isinf(self.low)):
            slow = self.verdict == SLOWER  # every seed: only one arm got there
            never, got = (trick, base) if slow else (base, trick)
            return (f"{never} never reached {self.target:.0%} on any of the {n} paired seeds; {got} reached "
                    f"it on every one ({_ratio_text(self.ratio)}).")
        if self.verdict == FASTER:
            return f"{trick} reached {self.target:.0%} {what} than {base}: {_ratio_text(self.ratio)} {rng}."
        if self.verdict == SLOWER:
            later = "in more steps" if self.metric == "steps to target" else "later"
            return f"{trick} reached {self.target:.0%} {later} than {base}: {_ratio_text(self.ratio)} {rng}."
        if self.verdict == CONTROL_FAILED:
            return (f"Control failed in the step-time comparison (two identical arms differed), so the "
                    f"time to {self.target:.0%} cannot be compared; steps ratio per seed "
                    f"{_ratio_text(min(self.steps_ratios))}–{_ratio_text(max(self.steps_ratios))}.")
        if n < MIN_SEEDS:
            why = f"a seed-level verdict needs at least {MIN_SEEDS} paired seeds"
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

        return "\n".join([row(self.names[0], self.steps[0]), row(self.names[1], self.steps[1]),
                          f"{self.metric} ratio {_ratio_text(self.ratio)} {_range_text(self.low, self.high)} "
                          f"({self.interval})",
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


def _ratio_text(x: float) -> str:
    """A time-to-target ratio for text: ``"1.77×"``, or what an infinite or zero ratio means."""
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞× (only the trick got there)"
    if x == 0:
        return "0× (only the baseline got there)"
    return f"{x:.2f}×"


def _percent(p: float) -> str:
    """A coverage for text: ``"96.9 %"``, and ``"99.95 %"`` rather than a rounded ``"100.0 %"`` below 1."""
    text = f"{p * 100:.1f}"
    if text == "100.0" and p < 1.0:
        text = f"{math.floor(p * 1e4) / 100:.2f}"
    return f"{text} %"


def _range_text(low: float, high: float) -> str:
    """The seed interval for text: ``"[0.75×, 1.38×]"``, said once when only one arm ever got there."""
    if low == high and (low == 0 or math.isinf(low)):
        return f"[{low:g}×, {high:g}×]"
    return f"[{_ratio_text(low)}, {_ratio_text(high)}]"


def compare_targets(baseline: TargetResult, trick: TargetResult, *,
                    step_comparison: Comparison | None = None) -> TargetComparison:
    """Compare two time-to-target results seed by seed (the same seeds, paired).

    Time to target = steps × step time. With ``step_comparison`` (an interleaved
    :func:`~course_utils.timing.compare` of the baseline's step against the trick's) the verdict
    is "faster" only when (lowest per-seed steps ratio) × (low end of the step-time interval) > 1,
    "slower" only when (highest) × (high end) < 1. Without it only steps are compared (``metric``
    "steps to target"): step times from separate runs never enter a verdict.

    Returns:
        A :class:`TargetComparison`: "faster", "slower", "control failed" (the step-time
        comparison's A/A control failed) or "not resolvable with N seeds" (fewer than 6 seeds,
        an interval that includes 1, ties, or seeds where neither arm got there).

    Raises:
        ValueError: the two results were run on different seeds or targets.
    """
    if baseline.seeds != trick.seeds:
        raise ValueError(f"compare the same seeds: {baseline.seeds} vs {trick.seeds}")
    if baseline.target != trick.target:
        raise ValueError(f"compare the same target: {baseline.target} vs {trick.target}")
    n = len(baseline.seeds)
    steps_ratios = [_seed_ratio(b, t) for b, t in zip(baseline.steps, trick.steps)]
    if step_comparison is not None:
        speed, sci = step_comparison.speedup, tuple(step_comparison.ci)
        basis = (f"interleaved comparison, {speed:.3f}× [{sci[0]:.3f}, {sci[1]:.3f}] "
                 f"({step_comparison.verdict}); {format_seconds(step_comparison.median_s[0])} vs "
                 f"{format_seconds(step_comparison.median_s[1])} per step")
        metric = "time to target"
        step_cover = step_comparison.level
    else:
        speed, sci = 1.0, (1.0, 1.0)
        basis = ("not compared: steps only (these runs' own step times "
                 f"{format_seconds(baseline.step_time)} vs {format_seconds(trick.step_time)} enter no verdict)")
        metric = "steps to target"
        step_cover = 1.0
    known = [r for r in steps_ratios if not math.isnan(r)]
    complete = bool(known) and len(known) == len(steps_ratios)
    low = min(known) * sci[0] if known else math.nan
    high = max(known) * sci[1] if known else math.nan
    if n < MIN_SEEDS:
        verdict = f"not resolvable with {n} seeds"
    elif step_comparison is not None and step_comparison.verdict == CONTROL_FAILED:
        verdict = CONTROL_FAILED
    elif complete and low > 1.0:
        verdict = FASTER
    elif complete and high < 1.0:
        verdict = SLOWER
    else:
        verdict = f"not resolvable with {n} seeds"
    cover = seed_coverage(n) if n >= 2 else 0.0
    joint = max(0.0, cover - (1.0 - step_cover))
    interval = (f"[min, max] over {n} paired seeds, covers the median steps ratio {_percent(cover)}"
                + ("" if step_comparison is None else
                   f", × the step-time interval ({step_cover * 100:.0f} %): together at least "
                   f"{_percent(joint)}"))
    return TargetComparison(
        names=(baseline.label or "baseline", trick.label or "trick"), target=baseline.target,
        seeds=list(baseline.seeds), ratios=[r * speed for r in steps_ratios],
        ratio=statistics.median(known) * speed if known else math.nan, low=low, high=high,
        steps=(list(baseline.steps), list(trick.steps)),
        step_time=(baseline.step_time, trick.step_time) if step_comparison is None else
        tuple(step_comparison.median_s),  # type: ignore[arg-type]
        verdict=verdict, steps_ratios=steps_ratios, step_speedup=speed, step_ci=sci,  # type: ignore[arg-type]
        step_basis=basis, metric=metric, interval=interval)

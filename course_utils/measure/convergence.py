"""Time to a target accuracy over seeds, and a seed-level comparison of two such results.

Tricks that change convergence (LR schedule, batch size, optimizer, clipping, normalisation) are
measured as time to target = steps to target × step time. Steps come from paired seeds (the same
seed gives both arms the same initial weights and batches); the crossing of the target is
interpolated between evaluations, so the evaluation grid does not decide. With at least 6 seeds
the order statistics of the per-seed steps ratios make a distribution-free interval for their
median (:func:`~course_utils.measure.stats.order_statistic_ranks`, as the timing interval does: [min, max]
at 6 seeds, 96.9 %; ranks 3 and 10 at 12, 96.1 %), so more seeds give a narrower interval; it is
combined with the *interleaved* step-time interval (:func:`~course_utils.measure.compare.compare`), never
with step times from separate runs. Targets are accuracies as fractions (0.9 for 90 %).
"""

from __future__ import annotations

import math
import numbers
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..env import seed_everything
from ..units import format_seconds
from . import forcing
from .comparison import Comparison
from .stats import CONTROL_FAILED, FASTER, MIN_SEEDS, SLOWER, min_rounds, order_statistic_ranks, seed_coverage
from .target_comparison import TargetComparison, _percent, seeds_needed

if TYPE_CHECKING:
    from ..training.loop import History

__all__ = ["TargetComparison", "TargetResult", "check_target", "compare_targets", "crossing_step", "steps_to_target"]


def check_target(target: Any, argument: str = "target") -> float:
    """``target`` as a float if it is an accuracy in (0, 1]; otherwise a clear error naming ``argument``.

    Raises:
        TypeError: not a number (a bool is not an accuracy either).
        ValueError: outside (0, 1], e.g. 90 or 2.0 where 0.9 was meant.
    """
    if isinstance(target, bool) or not isinstance(target, numbers.Real):
        raise TypeError(f"{argument} is a test accuracy as a fraction (e.g. 0.9 for 90 %), got {target!r}")
    if not 0.0 < float(target) <= 1.0:
        raise ValueError(f"{argument}={target!r} is not an accuracy: accuracies are fractions in (0, 1], "
                         f"e.g. {argument}=0.9 for 90 %")
    return float(target)


def crossing_step(eval_step: Sequence[float], eval_accuracy: Sequence[float], target: float) -> float | None:
    """The step at which accuracy first reached ``target``, interpolated between evaluations.

    Linear between the last evaluation below the target and the first at or above it, so two
    runs that cross between the same two evaluations are not made equal by the grid. A target
    reached at the first evaluation is that evaluation's step. None if never reached.

    Raises:
        TypeError, ValueError: ``target`` is not an accuracy in (0, 1] (see :func:`check_target`).
    """
    check_target(target)
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

    def __post_init__(self) -> None:
        check_target(self.target)

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
    seed) and should call :func:`~course_utils.training.loop.train` with ``eval_every`` and ``target``.

    Args:
        run: builds a model and trains it for one seed, returning the History.
        target: the test accuracy to reach, as a fraction in (0, 1] (0.9 for 90 %).
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

    Raises:
        TypeError, ValueError: ``target`` is not an accuracy in (0, 1] (checked before any seed
            trains), or no seeds.
    """
    target = check_target(target)
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


def _seed_interval(known: list[float], n: int, level: float) -> tuple[float, float, float, str]:
    """The ``level`` interval for the median of the ``known`` steps ratios: ``(low, high, coverage, words)``.

    Order statistics (ranks k and m−k+1 of m), as the timing interval: more seeds, a narrower
    interval at the same coverage. With fewer ratios than ``level`` needs, [min, max] and its own
    (lower) coverage, for the printout only: such a comparison earns no verdict.
    """
    m = len(known)
    if m == 0:
        return math.nan, math.nan, 0.0, f"no interval: no seed of {n} where either arm got there"
    data = sorted(known)
    if m >= min_rounds(level):
        k, k_high, cover = order_statistic_ranks(m, level)
    else:
        k, k_high, cover = 1, m, seed_coverage(m) if m >= 2 else 0.0
    ranks = "[min, max]" if k == 1 else f"order statistics {k} and {k_high}"
    left_out = "" if m == n else f" where an arm got there (neither did on {n - m} of {n})"
    return data[k - 1], data[k_high - 1], cover, f"{ranks} of {m} paired seeds{left_out}"


def compare_targets(baseline: TargetResult, trick: TargetResult, *, step_comparison: Comparison | None = None,
                    level: float = 0.95) -> TargetComparison:
    """Compare two time-to-target results seed by seed (the same seeds, paired).

    Time to target = steps × step time. The per-seed steps ratios (baseline / trick) give a
    distribution-free ``level`` interval for their median from order statistics ([min, max] at 6
    seeds, ranks 3 and 10 at 12). With ``step_comparison`` (an interleaved
    :func:`~course_utils.measure.compare.compare` of the baseline's step against the trick's) the verdict
    is "faster" only when (low end of the seed interval) × (low end of the step-time interval)
    > 1, "slower" only when (high end) × (high end) < 1; the two intervals hold together with at
    least the sum of their coverages minus 1 (Bonferroni), which the label states. Without it only
    steps are compared (``metric`` "steps to target"): step times from separate runs never enter
    a verdict.

    Args:
        baseline: the plain arm's :func:`steps_to_target` result.
        trick: the trick's, on the same seeds and target.
        step_comparison: the interleaved step-time comparison, or None for steps only.
        level: coverage asked of the seed interval (0.95; a verdict needs at least 6 seeds, more
            for a higher level).

    Returns:
        A :class:`TargetComparison`: "faster", "slower", "control failed" (the step-time
        comparison's A/A control failed) or "not resolvable with N seeds" (too few seeds, an
        interval that includes 1, ties, or seeds where neither arm got there).

    Raises:
        ValueError: the two results were run on different seeds or targets, or ``level`` is not
            in (0, 1).
    """
    if baseline.seeds != trick.seeds:
        raise ValueError(f"compare the same seeds: {baseline.seeds} vs {trick.seeds}")
    if baseline.target != trick.target:
        raise ValueError(f"compare the same target: {baseline.target} vs {trick.target}")
    check_target(baseline.target, "baseline.target")
    need = seeds_needed(level)  # also checks the level
    n = len(baseline.seeds)
    steps_ratios = [_seed_ratio(b, t) for b, t in zip(baseline.steps, trick.steps)]
    if step_comparison is not None:
        speed, sci = step_comparison.speedup, tuple(step_comparison.carry_ci)  # widened if it carried over
        basis = (f"interleaved comparison, {speed:.3f}× [{sci[0]:.3f}, {sci[1]:.3f}] "
                 f"({step_comparison.verdict}); a step of {format_seconds(step_comparison.median_s[0])} for "
                 f"{baseline.label or 'the baseline'} (its own median), so "
                 f"{format_seconds(step_comparison.median_s[0] / speed)} for {trick.label or 'the trick'} "
                 "at the interleaved speed-up")
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
    seed_low, seed_high, cover, words = _seed_interval(known, n, level)
    low, high = seed_low * sci[0], seed_high * sci[1]
    if n < need:
        verdict = f"not resolvable with {n} seeds"
    elif step_comparison is not None and step_comparison.verdict == CONTROL_FAILED:
        verdict = CONTROL_FAILED
    elif complete and low > 1.0:
        verdict = FASTER
    elif complete and high < 1.0:
        verdict = SLOWER
    else:
        verdict = f"not resolvable with {n} seeds"
    interval = words if not known else f"{words}, covers the median steps ratio {_percent(cover)}"
    if step_comparison is not None and known:
        joint = max(0.0, cover - (1.0 - step_cover))
        interval += (f", × the step-time interval ({step_cover * 100:.4g} %): together at least "
                     f"{_percent(joint, at_least=True)} (Bonferroni)")
    return forcing.apply(TargetComparison(  # forced only in a smoke-profile test run
        names=(baseline.label or "baseline", trick.label or "trick"), target=baseline.target,
        seeds=list(baseline.seeds), ratios=[r * speed for r in steps_ratios],
        ratio=statistics.median(known) * speed if known else math.nan, low=low, high=high,
        steps=(list(baseline.steps), list(trick.steps)),
        step_time=(baseline.step_time, trick.step_time) if step_comparison is None else
        tuple(step_comparison.median_s),  # type: ignore[arg-type]
        verdict=verdict, steps_ratios=steps_ratios, step_speedup=speed, step_ci=sci,  # type: ignore[arg-type]
        step_basis=basis, metric=metric, interval=interval, level=level))

"""Sentences built from the numbers they state, not chosen by a verdict.

The ratio with its interval, the per-arm medians, why a control failed, and what the seeds of a
time-to-target comparison did one by one.

A reading chosen by a verdict (:func:`~course_utils.results.readings.reading`) is one fixed text per
verdict, while the numbers inside one verdict vary: "on every seed" is false when one seed tied,
"the copy was counted" is false when the counter read 0. Lessons build such clauses here, from
the result, once, rather than each by hand. :class:`~course_utils.measure.comparison.Comparison` and
:class:`~course_utils.measure.target_comparison.TargetComparison` expose them as methods
(``c.ratio_text()``, ``c.medians_text()``, ``c.control_failure()``, ``t.per_seed()`` …).
"""

from __future__ import annotations

import math
from typing import Any

from ..units import format_seconds
from .stats import CONTROL_FAILED, FASTER, SLOWER

__all__ = ["basis", "carried_by", "control_failure", "medians_text", "per_seed", "ratio_text", "seed_counts"]


def _digits(*values: float) -> int:
    """Decimals that keep the printed values apart and off 1 when they are not 1 (2 to 4)."""
    vals = [v for v in values if math.isfinite(v)]
    for d in (2, 3, 4):
        shown = {v: f"{v:.{d}f}" for v in [*vals, 1.0]}
        if len(set(shown.values())) == len(shown):
            return d
    return 4


def _x(v: float, d: int) -> str:
    if math.isnan(v):
        return "n/a"
    if math.isinf(v):
        return "∞×"
    return f"{v:,.0f}×" if v >= 1000 else f"{v:.{d}f}×"


def ratio_text(result: Any) -> str:
    """``"1.13× [1.05, 1.20] (faster)"``: the ratio, its interval and the verdict, with digits enough.

    ``result``: a :class:`~course_utils.measure.comparison.Comparison` (its speed-up and interval) or a
    :class:`~course_utils.measure.target_comparison.TargetComparison` (its ratio and seed interval).
    """
    if hasattr(result, "speedup"):
        value, (lo, hi) = result.speedup, result.ci
    else:
        value, lo, hi = result.ratio, result.low, result.high
    d = _digits(value, lo, hi)
    return f"{_x(value, d)} [{_x(lo, d)[:-1]}, {_x(hi, d)[:-1]}] ({result.verdict})"


def medians_text(c: Any) -> str:
    """Each arm's own median time, said to be that and not the comparison (which is per-round ratios).

    Per-arm medians come from different rounds' noise; in drifting or stalling rounds they can
    even point the other way from the per-round ratio, so they are never the comparison.
    """
    base, trick = c.names
    text = (f"each arm's own median: {format_seconds(c.median_s[0])} ({base}) and "
            f"{format_seconds(c.median_s[1])} ({trick}); not the comparison, which is the median of "
            f"per-round ratios, {ratio_text(c)}")
    if c.verdict in (FASTER, SLOWER) and (c.median_s[0] > c.median_s[1]) != (c.verdict == FASTER):
        text += ": here the two medians point the other way, a sign of drift or stalls between rounds"
    return text


def control_failure(c: Any) -> str:
    """Why a comparison's control failed, from its numbers ("" when it did not fail).

    A carry-over (the baseline slower right after the trick) and two identical arms that
    differed are different failures with different remedies; the text names the one measured.
    """
    if c.verdict != CONTROL_FAILED:
        return ""
    if c.carry_failed and c.aa_ci[0] <= 1.0 <= c.aa_ci[1]:
        lo, hi = c.carry_over_ci
        return (f"a carry-over: the baseline's blocks right after {c.names[1]} took {c.carry_over:.3f}× the time "
                f"of the others ([{lo:.3f}, {hi:.3f}] at 99 %), enough on its own to make the verdict")
    return (f"two identical arms differed: {c.names[0]} against its own copy gave {c.aa_speedup:.3f}× "
            f"[{c.aa_ci[0]:.3f}, {c.aa_ci[1]:.3f}], an order or drift effect")


def seed_counts(t: Any) -> tuple[int, int, int, int]:
    """``(fewer, tied, more, missing)`` seeds: the trick took fewer, the same or more steps than the baseline.

    ``missing`` counts the seeds where an arm never got there (an infinite, zero or undefined ratio).
    """
    fewer = tied = more = missing = 0
    for r in t.steps_ratios:
        if not math.isfinite(r) or r == 0:
            missing += 1
        elif r > 1:
            fewer += 1
        elif r < 1:
            more += 1
        else:
            tied += 1
    return fewer, tied, more, missing


def per_seed(t: Any) -> str:
    """``"in steps, X took fewer than Y on 5 of 6 seeds, the same on 1 and more on 0"``, from the counts."""
    fewer, tied, more, missing = seed_counts(t)
    base, trick = t.names
    n = len(t.steps_ratios)
    text = f"in steps, {trick} took fewer than {base} on {fewer} of {n} seeds, the same on {tied} and more on {more}"
    if missing:
        only_trick = sum(1 for r in t.steps_ratios if math.isinf(r))
        only_base = sum(1 for r in t.steps_ratios if r == 0)
        neither = missing - only_trick - only_base
        parts = [f"only {trick} got there on {only_trick}" if only_trick else "",
                 f"only {base} on {only_base}" if only_base else "",
                 f"neither on {neither}" if neither else ""]
        text += "; " + ", ".join(p for p in parts if p)
    return text


def carried_by(t: Any) -> str:
    """Which factor alone puts the interval on the side of 1 it is on.

    ``"steps"``: the seed interval of the steps ratios excludes 1 by itself; ``"step time"``: the
    steps go both ways (or tie) and only the step-time interval moves the product off 1;
    ``"both"``: each excludes 1 on the same side; ``"neither"``: the product interval contains 1.
    """
    lo, hi = t.low, t.high
    if not (lo > 1.0 or hi < 1.0):
        return "neither"
    s_lo, s_hi = t.step_ci
    seed_lo = lo / s_lo if s_lo else math.nan
    seed_hi = hi / s_hi if s_hi else math.nan
    faster = lo > 1.0
    steps = seed_lo > 1.0 if faster else seed_hi < 1.0
    time = s_lo > 1.0 if faster else s_hi < 1.0
    return "both" if steps and time else ("steps" if steps else ("step time" if time else "neither"))


def basis(t: Any) -> str:
    """A sentence when the step-time interval alone set the verdict's side, else ``""``."""
    if carried_by(t) != "step time":
        return ""
    lo, hi = t.step_ci
    side = "faster" if t.low > 1.0 else "slower"
    return (f"the sign comes from the step-time interval alone ([{lo:.3f}, {hi:.3f}], {side} per step): "
            f"{per_seed(t)}")

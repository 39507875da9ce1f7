"""Per-round times in, a :class:`~course_utils.measure.comparison.Comparison` out: :func:`analyze` (no clock).

:func:`~course_utils.measure.compare.compare`, :func:`~course_utils.measure.sweep.sweep`, rounds of fresh
processes and the capstone's ablation all measure rounds in which the baseline runs twice (A and
A′, identical copies) and the trick once (B). This module turns those times into the speed-up,
its interval, the A/A control and the verdict, so the statistics are tested on injected times.

**The per-round statistic is A/B**, with A′ serving the A/A control (A/A′) alone. When the trick
does nothing, A and B are exchangeable, so A/B is as likely above 1 as below it *whatever the
shape of the timing noise*: the false-verdict rate is the label's for skewed noise too. The
statistic used before, √(A·A′)/B, is not: with right-skewed block times (a floor plus occasional
delays, which is what timing noise looks like) its median sits above 1 for identical arms, and
identical arms were called "faster" in 6 % of simulated comparisons at 12 rounds and 32 % at 120
(1 + Exp noise), while the A/A control, symmetric by construction, saw nothing.

Why A/B and not rounds of four blocks (A, A′, B, B′ with √(A·A′)/√(B·B′), also symmetric):
simulated at equal timing time (36 blocks: 12 rounds of three or 9 of four), power for a 1.2×
trick was 90 % against 96 % (log-normal 10 % noise), 90 % against 85 % (1 + Exp), 70 % against
76 % (log-t3) and 100 % against 96 % (5× stalls); from 30 rounds on both find it every time.
Neither wins, and four blocks would cost every sweep a copy of every arm and every slow
comparison a third more at its minimum of rounds. A/B costs nothing and is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .comparison import Comparison, total_warning
from .formatting import format_level, interval_label
from .stats import (
    CONTROL_LEVEL,
    FASTER,
    SLOWER,
    STREAK_ROUNDS,
    control_interval,
    median_ci,
    min_rounds,
    order_statistic_ranks,
    runs_test_p,
    verdict,
)

__all__ = ["analyze", "carry_over", "medians_warning", "range_only", "round_ratios"]

#: Below this runs-test p-value (each of the two series checked) rounds are flagged as not independent.
TREND_P = 0.005


def round_ratios(baseline: Sequence[float], control: Sequence[float],
                 trick: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-round A/B and A/A′, and which rounds have a ratio at all.

    A time of ``inf`` is a run that never finished (never reached its target): A/B is then
    ``inf`` (only the baseline missed) or 0 (only the trick did); a round in which both missed
    says nothing about which is faster and is left out (``keep`` is False there). Two copies of
    the baseline that both missed are identical runs: their A/A′ is 1.

    Returns:
        ``(ratios, aa_ratios, keep)``, each one value per round.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = a / b
        aa = np.where(np.isinf(a) & np.isinf(a2), 1.0, a / a2)
    return ratios, aa, ~(np.isinf(a) & np.isinf(b))


def carry_over(after_trick: Sequence[float],
               after_other: Sequence[float]) -> tuple[float | None, tuple[float, float] | None, int]:
    """Whether the trick leaves something behind for the baseline block that follows it.

    ``after_trick[i]`` and ``after_other[i]`` are the baseline's two copies in one round, the first
    run right after the trick's block, the second not (rounds where both or neither followed the
    trick are not given). With no carry-over the two copies are exchangeable, so their ratio has
    median 1; its 99 % interval (as the A/A control's) excluding 1 means the trick's block slowed
    (above 1) or sped up (below 1) the block after it, beyond the untimed call that precedes every
    block. Drift within rounds can show here too. Only the trick's effect on the baseline can be
    seen: the baseline's on the trick would need a copy of the trick.

    Returns:
        ``(median ratio, interval, rounds)``; None and None with fewer than 8 such rounds.
    """
    x = np.asarray(after_trick, dtype=float) / np.asarray(after_other, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < min_rounds(CONTROL_LEVEL):
        return None, None, int(x.size)
    ci, _ = control_interval(x, CONTROL_LEVEL)
    return float(np.median(x)), ci, int(x.size)


def _warnings(ratios: np.ndarray, aa: np.ndarray, ci: tuple[float, float], total: float, level: float,
              rounds_word: str, more: str) -> list[str]:
    """What the rounds themselves say about the measurement (not about the trick)."""
    out, n = [], int(ratios.size)
    lo, hi, _ = order_statistic_ranks(n, level)
    if n < STREAK_ROUNDS or (lo, hi) == (1, n):
        parts = ["the interval is the range of all of them"] if (lo, hi) == (1, n) else []
        if n < STREAK_ROUNDS:
            parts.append(f"too few to check that they are independent (the streak check needs {STREAK_ROUNDS}): "
                         f"{rounds_word} that drift or come in streaks would go unnoticed")
        out.append(f"only {n} {rounds_word}: {'; '.join(parts)}. {more}")
    finite = np.isfinite(ratios) & (ratios > 0)
    p = min(runs_test_p(np.log(ratios[finite])), runs_test_p(np.log(aa[np.isfinite(aa) & (aa > 0)])))
    if p < TREND_P:
        out.append(f"the {rounds_word} drift or come in streaks (runs test p = {p:.3f}): the interval assumes "
                   f"independent {rounds_word} and may cover less than it says; rerun on a quieter machine")
    return out + total_warning(total, ci)


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
    rounds_word: str = "rounds",
    more: str = "Give the comparison more time (budget=) for more rounds.",
    family: tuple[int, float | None] = (1, None),
    ratios: Sequence[float] | None = None,
) -> Comparison:
    """Turn per-round times of the three arms into a :class:`Comparison` (no clock involved).

    Args:
        baseline: seconds per call of the baseline (A), one value per round; ``inf`` for a run
            that never finished (see :func:`round_ratios`).
        control: the baseline's second copy (A′) in the same rounds: the A/A control only.
        trick: the trick's seconds per call (B) in the same rounds.
        names: display names of baseline and trick.
        level: coverage of the speed-up's interval (the control's is 99 % where rounds allow).
        first_call_s: each arm's first call, for the record.
        calls_per_round: calls of the baseline per round, for the record.
        trick_calls_per_round: calls of the trick per round, for the record (default: the same).
        num_threads: torch threads during the measurement, for the record.
        device: the device measured, for the record.
        min_effect: a declared minimum speed-up worth a verdict (1.0: any effect the interval shows).
        rounds_word: what a round is, in warnings ("seeds", "rounds of processes").
        more: what to do for more rounds, in the warning at few rounds.
        family: ``(rows, table level)`` when this comparison is one row of a table whose
            intervals hold together at that level (``level`` is then the row's own, from
            :func:`~course_utils.measure.stats.family_level`).
        ratios: per-round speed-ups to use instead of A/B (an ablation's removed row reads B/A,
            the speed-up of having the fix); the A/A control stays A/A′.

    Returns:
        The comparison: the median of per-round A/B with its distribution-free interval. Per-round
        ratios make slow drift cancel: rounds that all take twice as long as the one before,
        with the trick always twice as fast, give exactly 2.0.

    Raises:
        ValueError: the lists differ in length, hold a time that is not positive, or are too
            short for an interval at ``level``.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    if not a.size == a2.size == b.size:
        raise ValueError(f"every arm needs one time per round, got {a.size}, {a2.size}, {b.size}")
    if np.any(np.isnan(np.concatenate([a, a2, b]))) or min(a.min(initial=1.0), a2.min(initial=1.0),
                                                              b.min(initial=1.0)) <= 0:
        raise ValueError("times must be positive")
    _, _, coverage = order_statistic_ranks(a.size, level)
    r, aa, _ = round_ratios(a, a2, b)
    if ratios is not None:
        r = np.asarray(ratios, dtype=float)
    ci = median_ci(r, level)
    aa_ci, aa_coverage = control_interval(aa, CONTROL_LEVEL)
    with np.errstate(invalid="ignore"):
        total = float((a.sum() + a2.sum()) / 2.0 / b.sum()) if np.all(np.isfinite(b)) else math.nan
        if ratios is not None and math.isfinite(total):
            total = 1.0 / total
    if not math.isfinite(total):
        total = math.nan
    base_all = np.concatenate([a, a2])
    cv = lambda x: float(x.std() / x.mean()) if np.all(np.isfinite(x)) else math.nan  # noqa: E731
    rows, table = family
    c = Comparison(
        names=tuple(names),
        speedup=float(np.median(r)),
        ci=ci,
        aa_speedup=float(np.median(aa)),
        aa_ci=aa_ci,
        verdict=verdict(ci, aa_ci, min_effect=min_effect),
        median_s=(float(np.median(base_all)), float(np.median(b))),
        cv=(cv(base_all), cv(b)),
        rounds=int(a.size),
        calls_per_round=calls_per_round,
        trick_calls_per_round=trick_calls_per_round if trick_calls_per_round is not None else calls_per_round,
        num_threads=num_threads,
        device=device,
        first_call_s=tuple(float(f) for f in first_call_s),
        level=level,
        interval=interval_label(level, coverage, rounds_word=rounds_word, family=family),
        ratios=r.tolist(),
        aa_ratios=aa.tolist(),
        total_ratio=total,
        aa_coverage=aa_coverage,
        min_effect=min_effect,
        warnings=_warnings(r, aa, ci, total, level, rounds_word, more),
        family_rows=rows,
        family_level=table,
    )
    c.warnings += medians_warning(c)
    return c


def medians_warning(c: Comparison) -> list[str]:
    """A warning when the arms' own medians point the other way from a verdict of faster or slower.

    Per-arm medians pool different rounds' noise; the verdict reads the per-round ratios, which
    cancel drift. When the two disagree, the printed medians would contradict the verdict.
    """
    if c.verdict not in (FASTER, SLOWER) or not all(math.isfinite(t) for t in c.median_s):
        return []
    if (c.median_s[0] > c.median_s[1]) == (c.verdict == FASTER) or c.median_s[0] == c.median_s[1]:
        return []
    return [f"the arms' own medians point the other way from the verdict ({c.names[0]} "
            f"{c.median_s[0] * 1e3:.4g} ms, {c.names[1]} {c.median_s[1] * 1e3:.4g} ms): the rounds drifted or "
            "stalled; the verdict reads the per-round ratios, which cancel that, so quote them, not the medians"]


def range_only(baseline: Sequence[float], control: Sequence[float], trick: Sequence[float], *,
               names: tuple[str, str], rounds_word: str, level: float = 0.95, method: str = "",
               device: str = "cpu", ratios: Sequence[float] | None = None) -> Comparison:
    """Fewer rounds than an interval at ``level`` needs: the range of the ratios, and no verdict.

    ``rounds_word`` names a round in the verdict and warning ("rounds of processes", "seeds"):
    the verdict reads "not resolvable with 3 seeds". Infinite times (a run that never got there)
    give ratios of 0 or infinity; nothing is summed then. ``ratios`` as in :func:`analyze`.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    r, aa, _ = round_ratios(a, a2, b)
    if ratios is not None:
        r = np.asarray(ratios, dtype=float)
    base_all = np.concatenate([a, a2])
    n, need = int(a.size), min_rounds(level)
    finite = bool(np.all(np.isfinite(base_all)) and np.all(np.isfinite(b)))
    cv = (lambda x: float(x.std() / x.mean())) if finite else (lambda x: math.nan)
    total = float(base_all.sum() / 2 / b.sum()) if finite else math.nan
    if ratios is not None and finite:
        total = 1.0 / total
    return Comparison(
        names=tuple(names), speedup=float(np.median(r)) if n else math.nan,
        ci=(float(r.min()), float(r.max())) if n else (math.nan, math.nan),
        aa_speedup=float(np.median(aa)) if n else math.nan,
        aa_ci=(float(aa.min()), float(aa.max())) if n else (math.nan, math.nan),
        verdict=f"not resolvable with {n} {rounds_word}",
        median_s=(float(np.median(base_all)), float(np.median(b))) if n else (math.nan, math.nan),
        cv=(cv(base_all), cv(b)), rounds=n, calls_per_round=1, num_threads=1, device=device, level=level,
        interval=f"range of {n} {rounds_word}: too few for an interval (a {format_level(level)} interval needs {need})",
        ratios=r.tolist(), aa_ratios=aa.tolist(), total_ratio=total,
        warnings=[f"only {n} {rounds_word}: no verdict (run at least {need})"], method=method)

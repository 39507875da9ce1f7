"""Statistics of a comparison, separate from the clock: intervals for a median and the verdict.

Everything here is a pure function of numbers, so it is tested on injected times with exact
answers (``tests/test_stats.py``) rather than on a noisy machine.

The interval that :func:`~course_utils.measure.compare.compare` reports is a *distribution-free interval
for the median* built from order statistics: for ``n`` independent per-round ratios sorted as
``x(1) ≤ … ≤ x(n)``, the interval ``[x(k), x(n-k+1)]`` covers the true median with probability
``1 - 2·P(B ≤ k-1)`` where ``B ~ Binomial(n, ½)``, whatever the distribution of the noise. ``k`` is
the largest rank whose coverage is still at least the level asked for, so the interval covers at
least what it says. It needs ``n ≥ 6`` rounds for 95 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = [
    "mean_ci",
    "CONTROL_FAILED",
    "CONTROL_LEVEL",
    "MIN_SEEDS",
    "STREAK_ROUNDS",
    "FASTER",
    "SLOWER",
    "UNRESOLVED",
    "VERDICTS",
    "bootstrap_ci",
    "control_interval",
    "family_level",
    "median_ci",
    "min_rounds",
    "order_statistic_ranks",
    "runs_test_p",
    "seed_coverage",
    "verdict",
    "verdict_kind",
]

FASTER = "faster"
SLOWER = "slower"
UNRESOLVED = "not resolvable on this hardware"
CONTROL_FAILED = "control failed"
#: Every verdict a timing comparison can earn.
VERDICTS: tuple[str, ...] = (FASTER, SLOWER, UNRESOLVED, CONTROL_FAILED)
#: Coverage of the A/A control's interval: a bias check, so stricter than the comparison's 95 %.
CONTROL_LEVEL = 0.99
#: Paired seeds a seed-level verdict needs: [min, max] of 6 ratios covers the median 96.9 %.
MIN_SEEDS = 6
#: The fewest rounds at which the streak check (:func:`runs_test_p` at p < 0.01) can fire at all;
#: below it, rounds that are not independent go unnoticed, so the engine runs 8 where the budget allows.
STREAK_ROUNDS = 8


def _binom_cdf_half(k: int, n: int) -> float:
    """P(B ≤ k) for B ~ Binomial(n, ½), exactly (n is small: rounds of a comparison)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2.0**n


def order_statistic_ranks(n: int, level: float = 0.95) -> tuple[int, int, float]:
    """Ranks ``(k, n-k+1)`` (1-based) of the interval for the median, and its exact coverage.

    Args:
        n: number of values.
        level: the coverage asked for, in (0, 1).

    Returns:
        ``(low_rank, high_rank, coverage)`` with ``coverage ≥ level``.

    Raises:
        ValueError: ``level`` is not in (0, 1), or ``n`` is too small for it
            (see :func:`min_rounds`).
    """
    return _ranks(n, level)


@lru_cache(maxsize=4096)
def _ranks(n: int, level: float) -> tuple[int, int, float]:
    """:func:`order_statistic_ranks`, cached (exact binomial sums at 240 rounds are slow to redo).

    Cached here, not on the public function, so that a call to it still runs Python code that
    ``cu.spy`` can see (lesson 00's exercise is told apart from a call to the library by that).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    need = min_rounds(level)
    if n < need:
        raise ValueError(f"a {level * 100:.4g} % interval for the median needs at least {need} values, got {n}")
    k = 1
    while 1.0 - 2.0 * _binom_cdf_half(k, n) >= level:  # rank k+1 still covers enough
        k += 1
    return k, n - k + 1, 1.0 - 2.0 * _binom_cdf_half(k - 1, n)


def min_rounds(level: float = 0.95) -> int:
    """The fewest values for which an order-statistic interval of ``level`` exists (6 for 95 %)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    n = 1
    while 1.0 - 2.0 * 0.5**n < level:  # [min, max] covers 1 - 2·(½)^n
        n += 1
    return n


def median_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval for the median of ``values`` (order statistics).

    Args:
        values: independent measurements, at least :func:`min_rounds` of them. Infinities are
            values like any other (a run that never reached a target is infinitely slow): only
            their ranks matter.
        level: the coverage asked for; the interval covers at least this.

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: too few values for ``level``, or a value that is not a number (NaN).
    """
    data = np.sort(np.asarray(values, dtype=float))
    if np.any(np.isnan(data)):
        raise ValueError("median_ci needs numbers (no NaN)")
    lo, hi, _ = order_statistic_ranks(data.size, level)
    return float(data[lo - 1]), float(data[hi - 1])


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval for the median of ``values`` (taught in lesson 00).

    Not used by :func:`~course_utils.measure.compare.compare`: with the few rounds of a comparison it covers
    less than it says (87–90 % at 7 rounds for a nominal 95 %, in simulations); :func:`median_ci` does not.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise ValueError("bootstrap_ci needs at least 2 values")
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(n_boot, data.size), replace=True), axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(medians, tail)), float(np.quantile(medians, 1.0 - tail))


def control_interval(values: Sequence[float], level: float = CONTROL_LEVEL) -> tuple[tuple[float, float], float]:
    """The A/A control's interval for the median: ``level`` (99 %) when the rounds allow it.

    With fewer rounds than a ``level`` interval needs (8 for 99 %), the widest interval there is,
    ``[min, max]``, whose coverage ``1 - 2^(1-n)`` is returned beside it (96.9 % at 6 rounds).

    Returns:
        ``((low, high), coverage)``.
    """
    n = len(values)
    if n >= min_rounds(level):
        lo, hi, cover = order_statistic_ranks(n, level)
        data = np.sort(np.asarray(values, dtype=float))
        return (float(data[lo - 1]), float(data[hi - 1])), cover
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise ValueError(f"the A/A control needs at least 2 rounds, got {data.size}")
    return (float(data.min()), float(data.max())), 1.0 - 2.0 ** (1 - n)


def family_level(level: float, rows: int) -> float:
    """The level of each of ``rows`` intervals so that all of them hold together with at least ``level``.

    A table of many verdicts (a sweep's arms, an ablation's rows) is read as a whole: with 20
    rows at 95 % each and no real effect anywhere, at least one row would read "faster" or
    "slower" in up to 64 % of tables. Each row's interval at ``1 - (1 - level) / rows`` (Bonferroni)
    keeps the chance that *any* row's verdict is false at most ``1 - level``, for any dependence
    between the rows. Holm's step-down would resolve a few more rows, but its verdicts would
    no longer be read off the printed intervals; here every verdict is its interval's.

    Raises:
        ValueError: ``rows`` < 1 or ``level`` not in (0, 1).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if rows < 1:
        raise ValueError(f"a table has at least one row, got {rows}")
    return 1.0 - (1.0 - level) / rows


def verdict(ci: tuple[float, float], aa_ci: tuple[float, float], *, min_effect: float = 1.0) -> str:
    """The course's verdict for an interval and its A/A control (COURSE_DESIGN.md).

    - ``"control failed"`` when the A/A interval (the baseline against itself, at 99 %) excludes
      1.0: two identical arms differed, an order or drift effect that would bias the comparison.
    - ``"faster"`` when the interval lies above ``min_effect`` (1.0 unless a minimum effect worth
      reporting is declared), ``"slower"`` when it lies below ``1 / min_effect``.
    - ``"not resolvable on this hardware"`` otherwise.

    The interval alone decides: its error rates are the labelled ones (at most 2.5 % a side under
    the null at 95 %, for independent rounds and any noise shape, since the per-round ratio A/B
    of :func:`~course_utils.measure.analysis.analyze` is symmetric about 1 when the arms are
    exchangeable), with no extra condition on the A/A control's width.

    Raises:
        ValueError: ``min_effect`` is below 1.
    """
    if not min_effect >= 1.0:
        raise ValueError(f"min_effect is a speed-up of at least 1.0 (e.g. 1.05), got {min_effect}")
    if aa_ci[0] > 1.0 or aa_ci[1] < 1.0:
        return CONTROL_FAILED
    if ci[0] > min_effect:
        return FASTER
    if ci[1] < 1.0 / min_effect:
        return SLOWER
    return UNRESOLVED


def verdict_kind(verdict_text: str) -> str:
    """Which of the four verdicts a verdict string is.

    A seed-level "not resolvable with 3 seeds" is :data:`UNRESOLVED`. Raises ValueError on a
    string that is none of them.
    """
    if verdict_text in VERDICTS:
        return verdict_text
    if verdict_text.startswith("not resolvable"):
        return UNRESOLVED
    raise ValueError(f"not a verdict: {verdict_text!r}; verdicts are {VERDICTS}")


def runs_test_p(values: Sequence[float]) -> float:
    """Two-sided p-value of the Wald–Wolfowitz runs test above/below the median (distribution-free).

    Too few runs mean that the values come in streaks or drift, so rounds were not independent
    and an interval that assumes they are covers less than it says. Values equal to the median
    are dropped; a normal approximation with continuity correction; 1.0 when too few remain.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 4:
        return 1.0
    med = float(np.median(data))
    signs = [x > med for x in data if x != med]
    n1, n2 = sum(signs), len(signs) - sum(signs)
    if n1 < 2 or n2 < 2:
        return 1.0
    runs = 1 + sum(a != b for a, b in zip(signs, signs[1:]))
    n = n1 + n2
    mean = 2.0 * n1 * n2 / n + 1.0
    var = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1.0))
    if var <= 0:
        return 1.0
    z = (abs(runs - mean) - 0.5) / math.sqrt(var)
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0))))


def seed_coverage(n: int) -> float:
    """Coverage of ``[min, max]`` of ``n`` paired per-seed ratios as an interval for their median."""
    return 1.0 - 2.0 ** (1 - n)


def mean_ci(values: Sequence[float], level: float = 0.95, *, n_boot: int = 4000,
            seed: int = 0) -> tuple[float, float, float]:
    """The mean of ``values`` and a percentile-bootstrap interval for it: ``(mean, low, high)``.

    For a comparison's per-round ratios (``c.aa_ratios``, ``c.ratios``) beside the median and its
    order-statistic interval that :func:`~course_utils.measure.compare.compare` reports: one stalled round
    (a ratio of 3 among ratios near 1) pulls the mean and widens this interval, while the median
    ignores it. A display, not a verdict: with few rounds a bootstrap covers less than ``level``.

    Raises:
        ValueError: fewer than 2 values, a non-finite value, or ``level`` not in (0, 1).
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size < 2:
        raise ValueError(f"mean_ci needs at least 2 values, got {data.size}")
    if not np.all(np.isfinite(data)):
        raise ValueError("mean_ci needs finite values")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    rng = np.random.default_rng(seed)
    means = rng.choice(data, size=(n_boot, data.size), replace=True).mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(data.mean()), float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))

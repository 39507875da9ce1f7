"""Statistics of a comparison, separate from the clock: intervals for a median and the verdict.

Everything here is a pure function of numbers, so it is tested on injected times with exact
answers (``tests/test_stats.py``) rather than on a noisy machine.

The interval that :func:`~course_utils.timing.compare` reports is a *distribution-free interval
for the median* built from order statistics: for ``n`` independent per-round ratios sorted as
``x(1) ≤ … ≤ x(n)``, the interval ``[x(k), x(n-k+1)]`` covers the true median with probability
``1 - 2·P(B ≤ k-1)`` where ``B ~ Binomial(n, ½)``, whatever the distribution of the noise. ``k`` is
the largest rank whose coverage is still at least the level asked for, so the interval covers at
least what it says. It needs ``n ≥ 6`` rounds for 95 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "CONTROL_FAILED",
    "FASTER",
    "SLOWER",
    "UNRESOLVED",
    "VERDICTS",
    "bootstrap_ci",
    "median_ci",
    "min_rounds",
    "order_statistic_ranks",
    "verdict",
]

FASTER = "faster"
SLOWER = "slower"
UNRESOLVED = "not resolvable on this hardware"
CONTROL_FAILED = "control failed"
#: Every verdict a timing comparison can earn.
VERDICTS: tuple[str, ...] = (FASTER, SLOWER, UNRESOLVED, CONTROL_FAILED)


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
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    need = min_rounds(level)
    if n < need:
        raise ValueError(f"a {level:.0%} interval for the median needs at least {need} values, got {n}")
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
        values: independent measurements, at least :func:`min_rounds` of them.
        level: the coverage asked for; the interval covers at least this.

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: too few values for ``level``, or a value that is not finite.
    """
    data = np.sort(np.asarray(values, dtype=float))
    if not np.all(np.isfinite(data)):
        raise ValueError("median_ci needs finite values")
    lo, hi, _ = order_statistic_ranks(data.size, level)
    return float(data[lo - 1]), float(data[hi - 1])


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval for the median of ``values`` (taught in lesson 00).

    Not used by :func:`~course_utils.timing.compare`: with the few rounds of a comparison it covers
    less than it says (87–90 % at 7 rounds for a nominal 95 %, in simulations); :func:`median_ci` does not.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise ValueError("bootstrap_ci needs at least 2 values")
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(n_boot, data.size), replace=True), axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(medians, tail)), float(np.quantile(medians, 1.0 - tail))


def verdict(speedup: float, ci: tuple[float, float], aa_ci: tuple[float, float]) -> str:
    """The course's verdict for a speed-up and its A/A control (COURSE_DESIGN.md).

    - ``"control failed"`` when the A/A interval (baseline against itself) excludes 1.0: the
      machine was too noisy, or drifting, to trust any comparison made in the same rounds.
    - ``"faster"`` when the interval lies above 1.0 and the effect is larger than the A/A
      control's deviation above 1.0 (same side only, so a stall on the other side does not hide
      a clear effect); ``"slower"`` symmetrically.
    - ``"not resolvable on this hardware"`` otherwise: the interval is wider than the effect.
    """
    if aa_ci[0] > 1.0 or aa_ci[1] < 1.0:
        return CONTROL_FAILED
    effect = math.log(speedup)
    if ci[0] > 1.0 and effect > math.log(aa_ci[1]):
        return FASTER
    if ci[1] < 1.0 and -effect > -math.log(aa_ci[0]):
        return SLOWER
    return UNRESOLVED

"""The statistics of a comparison, on injected times: exact answers, no clock."""

import math
import random

import numpy as np
import pytest

import course_utils as cu
from course_utils.stats import (
    CONTROL_FAILED,
    FASTER,
    SLOWER,
    UNRESOLVED,
    bootstrap_ci,
    median_ci,
    min_rounds,
    order_statistic_ranks,
    verdict,
)


def test_min_rounds_and_ranks_are_the_binomial_ones():
    assert min_rounds(0.95) == 6 and min_rounds(0.99) == 8
    assert order_statistic_ranks(6) == (1, 6, pytest.approx(1 - 2 / 64))
    lo, hi, cover = order_statistic_ranks(20)  # P(B<=5) = 0.0207 -> ranks 6 and 15, 95.9 %
    assert (lo, hi) == (6, 15) and cover == pytest.approx(0.9586, abs=1e-4)
    with pytest.raises(ValueError, match="at least 6 values"):
        median_ci([1.0] * 5)
    with pytest.raises(ValueError, match="finite"):
        median_ci([1.0] * 5 + [math.nan])


@pytest.mark.parametrize("n", [6, 7, 15, 30])
def test_interval_covers_what_it_claims_on_injected_noise(n):
    """Log-normal noise with a known median: the interval covers it >= 94 % of 3000 runs."""
    rng = np.random.default_rng(n)
    hits = 0
    runs = 3000
    for _ in range(runs):
        values = 1.3 * np.exp(rng.normal(0.0, 0.2, n))  # true median 1.3
        lo, hi = median_ci(values)
        hits += lo <= 1.3 <= hi
    assert hits / runs >= 0.94, f"coverage {hits / runs:.3f} at {n} rounds"


def test_the_bootstrap_covers_less_than_it_says_at_few_rounds():
    """Why compare does not use it (lesson 00 shows it): ~90 % at 7 rounds."""
    rng = np.random.default_rng(0)
    hits = sum(bootstrap_ci(v, n_boot=400, seed=i)[0] <= 1.0 <= bootstrap_ci(v, n_boot=400, seed=i)[1]
               for i, v in enumerate(np.exp(rng.normal(0, 0.2, (400, 7)))))
    assert hits / 400 < 0.94


def test_drifting_rounds_with_a_constant_ratio_give_it_exactly():
    a = [1e-3 * 1.1**i for i in range(12)]
    c = cu.analyze(a, a, [t * 2 for t in a])  # the trick always takes twice as long
    assert c.speedup == 0.5 and c.ci == (0.5, 0.5) and c.time_ratio == 2.0
    c = cu.analyze(a, a, [t / 2 for t in a])
    assert c.speedup == 2.0 and c.aa_speedup == 1.0


def test_clear_effect_with_a_stalled_control_block_is_still_faster():
    """One stalled A/A block must not hide a clear 1.5x effect (the old rule did)."""
    rng = np.random.default_rng(1)
    a = 1e-3 * np.exp(rng.normal(0, 0.03, 12))
    a2 = 1e-3 * np.exp(rng.normal(0, 0.03, 12))
    a2[3] *= 5.0  # the control's copy of the baseline stalled once
    b = a / 1.5 * np.exp(rng.normal(0, 0.03, 12))
    c = cu.analyze(a, a2, b)
    assert c.verdict == FASTER, str(c)
    assert "faster" in c.summary() and "interval" in c.interval


def test_verdict_rule_cases():
    assert verdict(1.5, (1.4, 1.6), (0.97, 1.03)) == FASTER
    assert verdict(0.6, (0.55, 0.65), (0.97, 1.03)) == SLOWER
    assert verdict(1.02, (1.01, 1.04), (0.95, 1.05)) == UNRESOLVED  # effect within the control's spread
    assert verdict(1.01, (0.98, 1.04), (0.99, 1.01)) == UNRESOLVED  # interval includes 1
    assert verdict(2.0, (1.9, 2.1), (1.02, 1.08)) == CONTROL_FAILED  # A/A excludes 1: machine too noisy
    # same side only: a deviation of the control on the slower side does not hide a faster effect
    assert verdict(1.5, (1.4, 1.6), (0.5, 1.02)) == FASTER


def test_control_failed_is_reported_in_words():
    a = np.full(6, 1e-3)
    c = cu.analyze(a, a * 0.9, a)  # the control copy 10 % faster in every round
    assert c.verdict == CONTROL_FAILED and "too noisy" in c.summary()
    assert not c.resolved


def test_analyze_rejects_bad_input():
    with pytest.raises(ValueError, match="one time per round"):
        cu.analyze([1.0] * 6, [1.0] * 6, [1.0] * 5)
    with pytest.raises(ValueError, match="positive"):
        cu.analyze([1.0] * 6, [1.0] * 6, [0.0] * 6)
    with pytest.raises(ValueError, match="at least 6"):
        cu.analyze([1.0] * 5, [1.0] * 5, [1.0] * 5)


def test_per_item_recomputes_the_verdict():
    a = np.full(6, 1e-3) * np.linspace(1, 1.01, 6)
    c = cu.analyze(a, a, a * 2)  # 2x the time per call ...
    p = c.per_item((64, 256))  # ... for 4x the examples: 2x the examples per second
    assert c.verdict == SLOWER and p.verdict == FASTER
    assert p.speedup == pytest.approx(2.0) and p.names[1].endswith("per example")
    with pytest.raises(ValueError):
        c.per_item((0, 1))


def test_balanced_orders_put_every_arm_in_every_position_equally():
    from course_utils.timing import balanced_orders

    orders = balanced_orders(12, ("A", "A2", "B"), random.Random(0))
    assert len(set(orders)) == 6
    for pos in range(3):
        counts = {arm: sum(o[pos] == arm for o in orders) for arm in ("A", "A2", "B")}
        assert set(counts.values()) == {4}, counts

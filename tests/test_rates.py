"""Rates over seeds: the exact binomial interval covers what it says, the paired verdict errs as labelled."""

import math

import numpy as np
import pytest

import course_utils as cu
from course_utils.measure.rates import HIGHER, LOWER, mcnemar_p, percent
from course_utils.results import labels


def binom_pmf(k, n, p):
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def test_binomial_ci_known_values():
    # closed forms at the ends: 0 of n has upper end 1 - (α/2)^(1/n), n of n lower end (α/2)^(1/n)
    assert cu.measure.rates.binomial_ci(0, 6) == (0.0, pytest.approx(1 - 0.025 ** (1 / 6), abs=1e-12))
    assert cu.measure.rates.binomial_ci(6, 6) == (pytest.approx(0.025 ** (1 / 6), abs=1e-12), 1.0)
    # tabulated Clopper–Pearson values
    assert cu.measure.rates.binomial_ci(3, 6) == (pytest.approx(0.118117, abs=1e-6), pytest.approx(0.881883, abs=1e-6))
    assert cu.measure.rates.binomial_ci(5, 20, level=0.9) == (pytest.approx(0.104081, abs=1e-6),
                                                               pytest.approx(0.455582, abs=1e-6))


def test_binomial_ci_ends_are_equal_tailed():
    for n in (6, 12, 25):
        for k in range(1, n):
            low, high = cu.measure.rates.binomial_ci(k, n)
            assert sum(binom_pmf(i, n, low) for i in range(k, n + 1)) == pytest.approx(0.025, abs=1e-9)
            assert sum(binom_pmf(i, n, high) for i in range(k + 1)) == pytest.approx(0.025, abs=1e-9)


@pytest.mark.parametrize("n", [6, 12, 30])
def test_binomial_ci_covers_at_least_its_level_for_every_rate(n):
    intervals = [cu.measure.rates.binomial_ci(k, n) for k in range(n + 1)]
    for p in np.linspace(0.0025, 0.9975, 400):
        coverage = sum(binom_pmf(k, n, p) for k, (lo, hi) in enumerate(intervals) if lo <= p <= hi)
        assert coverage >= 0.95 - 1e-12, f"n={n}, p={p:.4f}: coverage {coverage:.4f}"


def test_binomial_ci_refuses_bad_input():
    for args in [(7, 6), (-1, 6), (0, 0), (1.5, 6), (True, 6)]:
        with pytest.raises(ValueError):
            cu.measure.rates.binomial_ci(*args)
    with pytest.raises(ValueError, match="level"):
        cu.measure.rates.binomial_ci(1, 6, level=1.0)


def test_mcnemar_false_verdicts_at_most_five_percent_whatever_the_discordant_count():
    # under "no difference" each discordant seed goes either way with probability 1/2
    for d in range(1, 41):
        false = sum(math.comb(d, j) / 2**d for j in range(d + 1) if mcnemar_p(j, d - j) < 0.05)
        assert false <= 0.05, f"{d} discordant seeds: false verdicts {false:.4f}"


def test_compare_rates_false_verdicts_on_injected_outcomes():
    rng = np.random.default_rng(0)
    seeds = list(range(12))
    false = 0
    for _ in range(2000):
        p = rng.uniform(0.1, 0.9)
        shared = rng.random(12) < 0.5  # correlated arms: the same seed often does the same in both
        a = [bool(s or r) for s, r in zip(shared & (rng.random(12) < p), rng.random(12) < p / 2)]
        b = [bool(s or r) for s, r in zip(shared & (rng.random(12) < p), rng.random(12) < p / 2)]
        c = cu.compare_rates(cu.rate(a, what="diverged", seeds=seeds), cu.rate(b, what="diverged", seeds=seeds))
        false += c.verdict in (LOWER, HIGHER)
    assert false / 2000 <= 0.05


def test_compare_rates_verdicts_and_reading():
    seeds = list(range(6))
    base = cu.rate([True] * 6, what="diverged", label="no clipping", seeds=seeds)
    clip = cu.rate([False] * 6, what="diverged", label="clipping", seeds=seeds)
    c = cu.compare_rates(base, clip)
    assert c.verdict == LOWER and c.p_value == pytest.approx(2 / 64) and c.only_baseline == 6
    assert "clipping diverged less often than no clipping" in c.summary()
    assert cu.compare_rates(clip, base).verdict == HIGHER
    texts = dict(lower="L", higher="H", not_resolvable="N")
    assert cu.reading(c, **texts) == "L"
    five = cu.compare_rates(cu.rate([True] * 5, what="diverged"), cu.rate([False] * 5, what="diverged"))
    assert five.verdict == "not resolvable with 5 seeds" and cu.reading(five, **texts) == "N"
    same = cu.compare_rates(base, base)
    assert same.verdict.startswith("not resolvable") and same.p_value == 1.0
    with pytest.raises(TypeError, match="higher"):
        cu.reading(c, lower="L", not_resolvable="N")
    with pytest.raises(TypeError, match="no 'faster' verdict"):
        cu.reading(c, **texts, faster="F")
    with pytest.raises(ValueError, match="same seeds"):
        cu.compare_rates(base, cu.rate([False] * 6, what="diverged", seeds=range(1, 7)))
    with pytest.raises(ValueError, match="same event"):
        cu.compare_rates(base, cu.rate([False] * 6, what="spiked", seeds=seeds))


def test_a_timing_reading_refuses_rate_texts():
    a = 1e-3 * np.ones(12)
    with pytest.raises(TypeError, match="no 'lower' verdict"):
        cu.reading(cu.measure.analysis.analyze(a, a, a), faster="F", slower="S", not_resolvable="N", control_failed="C",
                   lower="L")


def test_rate_prints_saves_and_describes_itself():
    r = cu.rate([True, False, False, True, False, False], what="diverged", label="no clipping")
    assert (r.k, r.n, r.value) == (2, 6, pytest.approx(1 / 3))
    assert "diverged on 2 of 6 seeds, 33.3 % [4.3 %, 77.7 %]" in str(r) and "95 % interval" in str(r)
    d = r.to_dict()
    assert d["kind"] == "rate" and labels.describe(d) == "diverged on 2 of 6 seeds: 33% [4%, 78%]"
    c = cu.compare_rates(r, cu.rate([False] * 6, what="diverged", label="clipping")).to_dict()
    assert labels.describe(c).startswith("diverged 33% vs 0% of 6 seeds") and "Clopper" not in labels.interval_kind(c)
    with pytest.raises(ValueError, match="True/False"):
        cu.rate([1, 0], what="diverged")
    with pytest.raises(ValueError, match="seeds"):
        cu.rate([True], what="diverged", seeds=[0, 1])


def test_rate_ends_get_the_digits_they_need():
    """Whole percent printed 1 of 12 as "8% [0%, 38%]", a lower end of 0.21 % said as zero."""
    one = cu.rate([True] + [False] * 11, what="diverged", label="clipping")
    assert "diverged on 1 of 12 seeds, 8.3 % [0.21 %, 38.5 %]" in str(one)
    assert "0 of 6 seeds, 0 % [0 %, 45.9 %]" in str(cu.rate([False] * 6, what="diverged"))
    assert "6 of 6 seeds, 100 % [54.1 %, 100 %]" in str(cu.rate([True] * 6, what="diverged"))
    assert [percent(p) for p in (0.0004, 0.00999, 0.5, 0.9979, 0.9996, 1.0)] == [
        "0.040 %", "1.0 %", "50.0 %", "99.8 %", "99.960 %", "100 %"]  # never a false "0 %" or "100.0 %"
    low, high = cu.measure.rates.binomial_ci(1, 2000)
    assert percent(low) != "0.0 %" and float(percent(low).split()[0]) == pytest.approx(low * 100, rel=0.05)


def test_diverged_reads_non_finite_losses_and_chance_accuracy():
    ok = cu.History(loss=[2.3, 0.5], eval_accuracy=[0.8])
    assert not cu.diverged(ok, num_classes=10)
    assert cu.diverged(cu.History(loss=[2.3, float("nan")], eval_accuracy=[0.8]), num_classes=10)
    assert cu.diverged(cu.History(loss=[2.3, float("inf")]), num_classes=10)
    assert cu.diverged(cu.History(loss=[2.3, 2.302], eval_accuracy=[0.1]), num_classes=10)
    assert not cu.diverged(cu.History(loss=[2.3, 2.0]), num_classes=10)


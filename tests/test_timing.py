import json

import pytest
import torch

import course_utils as cu
from course_utils.timing import bootstrap_ci

A = torch.randn(192, 192)


def work():
    torch.mm(A, A)


def double_work():
    work()
    work()


def test_aa_comparison_is_not_resolvable():
    c = cu.compare(work, work, rounds=30, num_threads=1, names=("f", "f again"))
    assert c.verdict == "not resolvable on this hardware", str(c)
    assert "Not resolvable" in c.summary()
    if not c.ci[0] <= 1.0 <= c.ci[1]:
        # A 95 % interval misses the truth about 1 time in 20 by design (measured here: 4 of 60).
        # Two independent misses in a row (p ≈ 0.3 %) would mean a bias in compare.
        c = cu.compare(work, work, rounds=30, num_threads=1, seed=1)
    assert c.ci[0] <= 1.0 <= c.ci[1], str(c)


def test_double_work_is_about_two_times_slower():
    c = cu.compare(work, double_work, rounds=20, num_threads=1)
    assert 1.6 < c.time_ratio < 2.5, str(c)
    assert c.ci[1] < 1.0, str(c)  # the interval of the speed-up excludes 1.0
    assert c.verdict == "slower"
    assert "slower" in c.summary() and "takes" in c.summary()


def test_comparison_prints_plots_and_serialises():
    c = cu.compare(work, double_work, rounds=5, num_threads=1, min_round_time=0.005)
    text = str(c)
    for part in ("median time", "speed-up", "A/A control", "verdict", "1 thread", "interleaved"):
        assert part in text
    assert "<table>" in c._repr_html_()
    d = json.loads(c.to_json())
    assert d["kind"] == "comparison" and len(d["ratios"]) == 5 == d["rounds"]
    assert cu.Comparison.from_dict(d) == c
    ax = c.plot()
    assert len(ax.containers) == 2  # the trick's interval and the A/A control's


def test_threads_are_pinned_during_and_restored_after():
    before = torch.get_num_threads()
    seen = []
    c = cu.compare(lambda: seen.append(torch.get_num_threads()), work, rounds=5, num_threads=1,
                   min_round_time=0.0)
    assert set(seen) == {1} and c.num_threads == 1
    assert torch.get_num_threads() == before


def test_bad_arms_get_clear_errors():
    with pytest.raises(TypeError, match="baseline must be a callable"):
        cu.compare(42, work)
    with pytest.raises(TypeError, match="trick must be a callable"):
        cu.compare(work, "fast")

    def broken():
        raise ZeroDivisionError("boom")

    with pytest.raises(RuntimeError, match="'my trick' raised ZeroDivisionError: boom"):
        cu.compare(work, broken, names=("base", "my trick"))
    with pytest.raises(ValueError, match="at least 5"):
        cu.compare(work, work, rounds=3)
    with pytest.raises(TypeError, match="fn must be a callable"):
        cu.benchmark(None)


def test_max_time_stops_early_but_keeps_five_rounds():
    c = cu.compare(work, work, rounds=1000, max_time=0.0, min_round_time=0.0)
    assert c.rounds == 5


def test_benchmark_states_threads():
    t = cu.benchmark(work, label="mm", num_threads=1, min_run_time=0.05)
    assert t.median_s > 0 and t.num_threads == 1 and "1 thread" in str(t)


def test_bootstrap_ci_brackets_the_median_and_is_deterministic():
    vals = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02]
    lo, hi = bootstrap_ci(vals)
    assert lo <= 1.01 <= hi and (lo, hi) == bootstrap_ci(vals)
    assert cu.format_seconds(0.0123) == "12.3 ms"


def test_naive_compare_is_a_single_unwarmed_ratio():
    ratios = [cu.naive_compare(work, work) for _ in range(5)]
    assert all(r > 0 for r in ratios)
    with pytest.raises(TypeError, match="trick must be a callable"):
        cu.naive_compare(work, 3)


def test_per_item_rescales_to_examples_per_second():
    c = cu.compare(work, double_work, rounds=5, num_threads=1, min_round_time=0.005)
    # the slower arm processes 4× the examples per call: about 2× the examples per second
    p = c.per_item((64, 256))
    assert p.speedup == pytest.approx(4 * c.speedup) and p.ci == pytest.approx((4 * c.ci[0], 4 * c.ci[1]))
    assert p.aa_ci == c.aa_ci and p.names[1].endswith("per example")
    assert p.median_s[1] == pytest.approx(c.median_s[1] / 256)
    with pytest.raises(ValueError):
        c.per_item((0, 1))

"""The clock: compare and benchmark on a real machine.

Tests marked ``clock`` time real work; each retries independent runs so that it fails by chance
less than once in 1,000 runs (a 95 % interval misses about 1 run in 20: three misses in a row
happen about once in 8,000). The statistics themselves are tested on injected times in
test_stats.py.
"""

import json

import pytest
import torch

import course_utils as cu
from course_utils.stats import CONTROL_FAILED, SLOWER, UNRESOLVED

A = torch.randn(192, 192)


def work():
    torch.mm(A, A)


def double_work():
    work()
    work()


def retried(fn, ok, tries=3):
    """Run ``fn(seed)`` until ``ok(result)`` or ``tries`` independent runs; return the last."""
    for seed in range(tries):
        result = fn(seed)
        if ok(result):
            break
    return result


@pytest.mark.clock
def test_aa_comparison_claims_no_effect():
    c = retried(lambda s: cu.compare(work, work, num_threads=1, budget=1.5, seed=s, names=("f", "f again")),
                lambda c: c.ci[0] <= 1.0 <= c.ci[1] and c.verdict in (UNRESOLVED, CONTROL_FAILED))
    assert c.ci[0] <= 1.0 <= c.ci[1], str(c)
    assert c.verdict in (UNRESOLVED, CONTROL_FAILED), str(c)


@pytest.mark.clock
def test_double_work_is_about_two_times_slower():
    c = retried(lambda s: cu.compare(work, double_work, num_threads=1, budget=1.5, seed=s),
                lambda c: c.verdict == SLOWER and 1.6 < c.time_ratio < 2.5)
    assert 1.6 < c.time_ratio < 2.5, str(c)
    assert c.ci[1] < 1.0 and c.verdict == SLOWER, str(c)
    assert "slower" in c.summary() and "takes" in c.summary()


def test_comparison_prints_plots_and_serialises():
    c = cu.compare(work, double_work, rounds=6, num_threads=1, min_round_time=0.002)
    text = str(c)
    for part in ("median time", "first call", "speed-up", "A/A control", "verdict", "1 thread",
                 "interleaved", "order statistics"):
        assert part in text
    assert c.first_call_s[0] > 0 and c.first_call_s[1] > 0
    assert "<table>" in c._repr_html_()
    d = json.loads(c.to_json())
    assert d["kind"] == "comparison" and len(d["ratios"]) == 6 == d["rounds"]
    assert "order statistics" in d["interval"]
    assert cu.Comparison.from_dict(d) == c
    ax = c.plot()
    assert len(ax.containers) == 2  # the trick's interval and the A/A control's


def test_threads_are_pinned_during_and_restored_after():
    before = torch.get_num_threads()
    seen = []
    c = cu.compare(lambda: seen.append(torch.get_num_threads()), work, rounds=6, num_threads=1,
                   min_round_time=0.0)
    assert set(seen) == {1} and c.num_threads == 1
    assert torch.get_num_threads() == before


def test_garbage_collector_is_off_inside_timed_blocks_and_restored():
    import gc

    seen = []
    cu.compare(lambda: seen.append(gc.isenabled()), work, rounds=6, min_round_time=0.0)
    assert seen and not any(seen) and gc.isenabled()


def test_budget_sets_the_rounds_and_the_minimum_always_runs():
    c = cu.compare(work, work, budget=1e-6, min_round_time=0.0)
    assert c.rounds == 6  # the fewest for a 95 % interval, even past the budget
    c = cu.compare(work, work, budget=2.0, min_round_time=0.001)
    assert c.rounds > 6 and c.rounds % 6 == 0  # stopped at the end of a balanced block
    from course_utils.timing import BUDGETS

    assert set(BUDGETS) == set(cu.PROFILES) and BUDGETS["smoke"] < BUDGETS["cpu"]


def test_bad_arms_get_clear_errors():
    with pytest.raises(TypeError, match="baseline must be a callable"):
        cu.compare(42, work)
    with pytest.raises(TypeError, match="trick must be a callable"):
        cu.compare(work, "fast")

    def broken():
        raise ZeroDivisionError("boom")

    with pytest.raises(RuntimeError, match="'my trick' raised ZeroDivisionError: boom"):
        cu.compare(work, broken, names=("base", "my trick"))
    with pytest.raises(ValueError, match="at least 6"):
        cu.compare(work, work, rounds=3)
    with pytest.raises(ValueError, match="budget"):
        cu.compare(work, work, budget=0)
    with pytest.raises(TypeError, match="fn must be a callable"):
        cu.benchmark(None)


def test_benchmark_states_threads():
    t = cu.benchmark(work, label="mm", num_threads=1, min_run_time=0.05)
    assert t.median_s > 0 and t.num_threads == 1 and "1 thread" in str(t)
    assert t.to_dict()["kind"] == "timing"
    assert cu.format_seconds(0.0123) == "12.3 ms"


def test_naive_compare_is_a_single_unwarmed_ratio():
    ratios = [cu.naive_compare(work, work) for _ in range(5)]
    assert all(r > 0 for r in ratios)
    with pytest.raises(TypeError, match="trick must be a callable"):
        cu.naive_compare(work, 3)

"""The clock: compare and benchmark on a real machine.

Tests marked ``clock`` time real work; each retries independent runs (tests/clock.py) so that it
fails by chance less than once in 1,000 runs (a 95 % interval misses about 1 run in 20: three misses
in a row happen about once in 8,000). Calls per block and rounds per budget are checked on injected
times (no wall clock), the statistics themselves in test_stats.py.
"""

import json

import pytest
import torch

import course_utils as cu
from course_utils.measure.stats import CONTROL_FAILED, SLOWER, UNRESOLVED

from clock import inject_arm_seconds, retried

A = torch.randn(192, 192)


def work():
    torch.mm(A, A)


def double_work():
    work()
    work()


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
    for part in ("own median", "not the quotient of the arms' own medians", "first call", "speed-up",
                 "A/A control", "verdict", "1 thread", "interleaved", "order statistics"):
        assert part in text
    assert c.first_call_s[0] > 0 and c.first_call_s[1] > 0
    assert "<table>" in c._repr_html_()
    d = json.loads(c.to_json())
    assert d["kind"] == "comparison" and len(d["ratios"]) == 6 == d["rounds"]
    assert "order statistics" in d["interval"]
    assert cu.Comparison.from_dict(d) == c
    ax = cu.plot_comparison(c)
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


def test_budget_sets_the_rounds_and_the_minimum_always_runs(monkeypatch):
    inject_arm_seconds(monkeypatch, {work: 5e-3})  # injected times: the rounds do not depend on this machine
    c = cu.compare(work, work, budget=1e-6, min_round_time=0.0)
    assert c.rounds == 6  # the fewest for a 95 % interval, even past the budget
    c = cu.compare(work, work, budget=2.0, min_round_time=0.001)
    assert c.rounds > 6 and c.rounds % 3 == 0  # stopped at the end of a Latin-square block
    from course_utils.measure.compare import BUDGETS

    assert set(BUDGETS) == set(cu.env.PROFILES) and BUDGETS["smoke"] < BUDGETS["cpu"]


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
    ratios = [cu.measure.compare.naive_compare(work, work) for _ in range(5)]
    assert all(r > 0 for r in ratios)
    with pytest.raises(TypeError, match="trick must be a callable"):
        cu.measure.compare.naive_compare(work, 3)


def tiny():
    A[0, 0].item()


def test_calls_per_block_are_planned_from_the_seconds_of_one_call():
    from course_utils.measure.rounds import plan_calls

    assert plan_calls({"slow": 1e-3, "cheap": 1e-5}, 0.01) == {"slow": 10, "cheap": 1000}
    assert plan_calls({"slow": 1e-3, "cheap": 1e-5}, 0.0) == {"slow": 1, "cheap": 1}


def test_each_arm_gets_its_own_calls_per_block(monkeypatch):
    """A cheap arm beside a slow one is timed in blocks as long as the slow one's, not 1 call."""
    inject_arm_seconds(monkeypatch, {work: 1e-3, tiny: 1e-5})  # 1 ms and 10 µs a call, whatever the load
    c = cu.compare(work, tiny, rounds=6, num_threads=1, min_round_time=0.01, device="cpu")
    assert c.trick_calls_per_round > 5 * c.calls_per_round, str(c)
    assert f"{c.calls_per_round} / {c.trick_calls_per_round}" in str(c)


def test_arms_of_about_the_same_cost_share_the_baselines_calls_per_block(monkeypatch):
    """Blocks of different lengths bias µs-level per-call times (seen on the real clock); within 2x they share."""
    from course_utils.measure.rounds import close

    def similar():
        work()

    inject_arm_seconds(monkeypatch, {work: 1e-5, similar: 1.3e-5})
    c = cu.compare(work, similar, rounds=6, num_threads=1, min_round_time=0.01, device="cpu")
    assert c.trick_calls_per_round == c.calls_per_round, str(c)
    assert close(1.0, 2.0) and close(2.0, 1.0) and not close(1.0, 2.01)


@pytest.mark.clock
def test_loop_overhead_is_small_and_positive():
    from course_utils.measure.clock import loop_overhead

    per_call = retried(lambda s: loop_overhead(1000, torch.device("cpu")), lambda p: 0 < p < 5e-6)
    assert 0 < per_call < 5e-6


def test_a_failed_control_reruns_once_and_keeps_both(monkeypatch):
    import numpy as np

    from course_utils.measure import engine

    calls = []
    real = engine.measure

    def fake(fns, labels, baseline, **kw):
        m = real(fns, labels, baseline, **kw)
        calls.append(kw["opts"].seed)
        if len(calls) == 1:  # the first run: the control copy 20 % faster in every round
            m.times[engine.CONTROL_KEY] = list(np.asarray(m.times[baseline]) / 1.2)
        return m

    monkeypatch.setattr(engine, "measure", fake)
    c = cu.compare(work, double_work, rounds=6, num_threads=1, min_round_time=0.0)
    assert calls == [0, 1] and c.first_run is not None and c.first_run.verdict == CONTROL_FAILED
    assert "This is a rerun: in the first run the control failed, two identical arms differed" in c.summary()
    assert c.first_call_s == c.first_run.first_call_s  # the cold first calls were the first run's
    d = c.to_dict()
    assert d["first_run"]["verdict"] == CONTROL_FAILED
    assert cu.Comparison.from_dict(d).first_run.verdict == CONTROL_FAILED
    calls.clear()
    c = cu.compare(work, double_work, rounds=6, num_threads=1, min_round_time=0.0, rerun=False)
    assert calls == [0] and c.verdict == CONTROL_FAILED and c.first_run is None


def test_huge_and_tiny_ratios_print_without_false_zeros():
    from course_utils.measure.formatting import format_ratio, format_times

    assert format_ratio(6.1e-05) == "6.1e-05" and format_ratio(0.9061) == "0.906"  # a compile: not "0.000×"
    assert format_times(16393.4) == "16,393×" and format_times(1.387) == "1.39×" and format_times(2.5e7) == "2.5e7×"


def test_benchmark_times_a_cuda_arm_on_its_own_device(monkeypatch):
    # torch.utils.benchmark's Timer synchronises the current CUDA device only: an arm on cuda:1 while cuda:0 is
    # current would be timed by its launches. benchmark must make the arm's device current while it times.
    # Faked here (no GPU): the device check passes "cuda:1" through, and torch.cuda.device records its use.
    import course_utils.measure.compare as timing

    current = []

    class Device:
        def __init__(self, device):
            self.device = torch.device(device)

        def __enter__(self):
            current.append(self.device)

        def __exit__(self, *exc):
            current.pop()

    seen = []
    monkeypatch.setattr(timing, "check_device", lambda d: torch.device(d))
    monkeypatch.setattr(torch.cuda, "device", Device)
    t = cu.benchmark(lambda: seen.append(list(current)), device="cuda:1", min_run_time=0.01)
    assert t.device == "cuda"
    timed = seen[1:]  # the first call is the warm-up, before the Timer
    assert timed and all(c == [torch.device("cuda", 1)] for c in timed), seen[:3]

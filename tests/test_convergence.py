"""Seed-level verdicts on injected steps: ≥ 6 paired seeds, the step-time interval, ties, crossings."""

import math

import pytest

import course_utils as cu
from course_utils.measure.convergence import crossing_step
from course_utils.results import labels

SEEDS = list(range(6))


def result(label, steps, step_time=0.01, seeds=SEEDS):
    return cu.TargetResult(label, 0.8, list(seeds), list(steps), step_time)


def steps_cmp(speedup, lo, hi, verdict="faster"):
    """A step-time comparison with a given interval (built by analyze from injected rounds)."""
    import numpy as np

    a = np.full(12, 1e-3)
    c = cu.measure.analysis.analyze(a, a, a / speedup)
    c.ci, c.verdict = (lo, hi), verdict
    return c


def test_crossing_is_interpolated_between_evaluations():
    assert crossing_step([25, 50, 75], [0.5, 0.7, 0.9], 0.8) == pytest.approx(62.5)
    assert crossing_step([25, 50], [0.85, 0.9], 0.8) == 25.0  # reached at the first evaluation
    assert crossing_step([25, 50], [0.5, 0.6], 0.8) is None
    # two runs crossing between the same evaluations are no longer a tie made by the grid
    assert crossing_step([375, 400], [0.70, 0.81], 0.8) != crossing_step([375, 400], [0.79, 0.9], 0.8)


def test_fewer_than_six_seeds_is_never_a_verdict():
    base = result("b", [100] * 5, seeds=range(5))
    fast = result("t", [50] * 5, seeds=range(5))
    c = cu.compare_targets(base, fast, step_comparison=steps_cmp(1.0, 0.99, 1.01, "not resolvable on this hardware"))
    assert c.verdict == "not resolvable with 5 seeds" and "at least 6 paired seeds" in c.summary()


def test_faster_needs_lowest_steps_ratio_times_low_end_above_one():
    base = result("constant", [100, 120, 90, 100, 110, 100])
    fast = result("1cycle", [50, 40, 45, 50, 55, 50])  # steps ratios 2.0 ... 3.0
    c = cu.compare_targets(base, fast, step_comparison=steps_cmp(0.9, 0.85, 0.95, "slower"))
    assert c.steps_ratios == [2.0, 3.0, 2.0, 2.0, 2.0, 2.0]
    assert c.low == pytest.approx(2.0 * 0.85) and c.high == pytest.approx(3.0 * 0.95)
    assert c.verdict == "faster" and c.metric == "time to target"
    assert "96.9 %" in c.interval and "sooner" in c.summary()
    # the same steps, but each of the trick's steps may cost up to 2.1x: not resolvable
    c = cu.compare_targets(base, fast, step_comparison=steps_cmp(0.6, 0.47, 0.7, "slower"))
    assert c.verdict == "not resolvable with 6 seeds" and "includes 1" in c.summary()
    assert cu.compare_targets(fast, base, step_comparison=steps_cmp(1.0, 0.98, 1.02, "x")).verdict == "slower"


def test_an_unresolved_step_time_is_its_interval_not_one():
    """Old rule: an unresolved step comparison counted as 1.0, so a slower step could read 'faster'."""
    base = result("b", [100, 101, 100, 102, 100, 101])
    tie_ish = result("t", [99, 100, 99, 100, 99, 100])  # 1-2 % fewer steps on every seed
    c = cu.compare_targets(base, tie_ish, step_comparison=steps_cmp(0.97, 0.9, 1.04,
                                                                    "not resolvable on this hardware"))
    assert c.verdict.startswith("not resolvable") and c.low < 1.0


def test_ties_are_called_ties():
    base = result("b", [400] * 6)
    same = result("t", [400] * 6)
    c = cu.compare_targets(base, same, step_comparison=steps_cmp(1.0, 0.99, 1.01, "x"))
    assert c.tie and c.verdict == "not resolvable with 6 seeds" and "a tie" in c.summary()


def test_without_a_step_comparison_only_steps_are_compared():
    base = result("b", [100] * 6, step_time=0.001)
    fast = result("t", [50] * 6, step_time=0.1)  # separate runs' step times never enter the verdict
    c = cu.compare_targets(base, fast)
    assert c.verdict == "faster" and c.metric == "steps to target" and c.ratio == 2.0
    assert "fewer steps" in c.summary() and "enter no verdict" in c.step_basis


def test_control_failed_in_the_step_comparison_is_said():
    base, fast = result("b", [100] * 6), result("t", [50] * 6)
    c = cu.compare_targets(base, fast, step_comparison=steps_cmp(1.0, 0.9, 1.1, "control failed"))
    assert c.verdict == "control failed" and "two identical arms differed" in c.summary()
    text = cu.reading(c, faster="f", slower="s", not_resolvable="n", control_failed="c")
    assert text == "c"


def test_unreached_seeds_and_serialisation():
    base = result("b", [None, 5, 5, 5, 5, 5])
    trick = result("t", [None, None, 10, 10, 10, 10])
    c = cu.compare_targets(base, trick)
    assert math.isnan(c.steps_ratios[0]) and c.steps_ratios[1] == 0.0
    assert c.verdict == "not resolvable with 6 seeds" and "neither arm got there" in c.summary()
    d = c.to_dict()
    assert d["steps_ratios"][0] == "nan" and d["kind"] == "target_comparison"
    with pytest.raises(ValueError, match="same seeds"):
        cu.compare_targets(base, result("x", [1, 2], seeds=[0, 1]))


def test_a_given_step_time_says_where_it_came_from():
    """Separate runs' step times are labelled as such; an interleaved one replaces them in the printout."""
    import course_utils.training.loop  # noqa: F401 - History

    def run(seed):
        return cu.History(loss=[1.0] * 4, step_time=[0.5, 0.5, 0.5, 0.5], eval_step=[2, 4],
                          eval_accuracy=[0.7, 0.9])

    own = cu.steps_to_target(run, 0.8, seeds=[0, 1])
    assert own.step_time == 0.5 and "these runs' own clock" in str(own)
    given = cu.steps_to_target(run, 0.8, seeds=[0, 1], step_time=0.002, step_basis="interleaved sweep")
    assert given.step_time == 0.002 and "interleaved sweep" in str(given) and "own clock" not in str(given)
    assert given.steps == pytest.approx([3.0, 3.0]) and given.to_dict()["step_basis"] == "interleaved sweep"
    assert "interleaved comparison" in str(cu.steps_to_target(run, 0.8, seeds=[0], step_time=0.002))


def test_a_tie_made_by_identical_runs_is_a_tie_not_disagreement():
    """Two schedules that give the same LR at every step take the same interpolated steps: a tie."""
    a = result("yours", [371.4, 390.0, 412.5, 369.2, 369.9, 371.0])
    b = result("torch", [371.4, 390.0, 412.5, 369.2, 369.9, 371.0])
    c = cu.compare_targets(a, b, step_comparison=steps_cmp(1.0, 0.98, 1.02, "not resolvable on this hardware"))
    assert c.tie and "a tie" in c.summary() and "disagree" not in c.summary()
    # interpolation separates runs that the old 25-step grid made equal (400 vs 400)
    s1 = crossing_step([375, 400], [0.815, 0.83], 0.82)
    s2 = crossing_step([375, 400], [0.80, 0.821], 0.82)
    assert 375 < s1 < s2 < 400


def test_an_arm_that_never_got_there_is_said_once_not_as_a_zero_interval():
    base, never = result("batch 64", [300] * 6), result("batch 512, LR linear", [None] * 6)
    slower = cu.compare_targets(base, never)
    assert slower.verdict == "slower" and slower.high == 0
    assert slower.summary() == ("batch 512, LR linear never reached 80% on any of the 6 paired seeds; batch 64 "
                                "reached it on every one, so there is no ratio to give: the verdict counts a run "
                                "that never got there as infinitely slow.")
    assert "0×" not in str(slower) and "ratio: none, only batch 64 got there" in str(slower)
    assert str(never).startswith("batch 512, LR linear: 6 of 6 seeds never")
    said = cu.check_prediction(1.2, slower)
    assert "0×" not in said and "batch 512, LR linear never reached 80% on any of 6 seeds" in said, said
    assert cu.results.labels.describe(slower.to_dict()) == \
        "batch 512, LR linear never reached 80% on any of 6 seeds: slower"
    faster = cu.compare_targets(never, base)
    assert faster.verdict == "faster" and "batch 512, LR linear never reached" in faster.summary()
    partly = cu.compare_targets(base, result("t", [None, 400, 400, 400, 400, 400]))
    assert "0×" in partly.summary() and "never reached 80% on any" not in partly.summary()


def test_neither_arm_ever_reaching_the_target_is_said_so():
    never = result("no clipping", [None] * 12, seeds=range(12))
    also = result("clipping", [None] * 12, seeds=range(12))
    c = cu.compare_targets(never, also, step_comparison=steps_cmp(0.9, 0.89, 0.91, "slower"))
    assert c.verdict == "not resolvable with 12 seeds"
    assert c.summary() == ("Not resolvable with 12 seeds: neither no clipping nor clipping reached 80% on any of "
                           "the 12 paired seeds.")
    assert labels.describe(c.to_dict()) == "neither arm reached 80% on any of 12 seeds: not resolvable with 12 seeds"
    assert c.interval.startswith("no interval") and "covers" not in c.interval


# --- the seed interval: order statistics, so that more seeds help (review D5) ---

def test_more_seeds_narrow_the_interval_instead_of_widening_it():
    """The reviewer's repro: six seeds at 1.2 resolve; twelve (one of them 0.98) must resolve too."""
    six = cu.compare_targets(result("b", [120] * 6), result("t", [100] * 6))
    assert six.verdict == "faster" and (six.low, six.high) == (pytest.approx(1.2), pytest.approx(1.2))
    assert six.interval.startswith("[min, max] of 6 paired seeds") and "96.9 %" in six.interval
    base = [120.0, 120.02, 120.04, 120.06, 120.08, 120.1, 120.12, 120.14, 120.16, 120.18, 120.2, 98.0]
    twelve = cu.compare_targets(result("b", base, seeds=range(12)), result("t", [100.0] * 12, seeds=range(12)))
    assert twelve.verdict == "faster", twelve  # [min, max] was [0.980, 1.202]: "not resolvable"
    assert twelve.low == pytest.approx(1.2002) and twelve.high == pytest.approx(1.2016)
    assert "order statistics 3 and 10 of 12 paired seeds" in twelve.interval
    assert "covers the median steps ratio 96.1 %" in twelve.interval  # 1 - 2·P(Bin(12, ½) ≤ 2), exactly


def test_the_label_states_the_joint_coverage_with_a_step_comparison():
    c = cu.compare_targets(result("b", [120] * 6), result("t", [100] * 6), step_comparison=steps_cmp(1.0, 0.99, 1.01))
    # 96.875 % for the seeds, 95 % for the step time: together at least 91.875 %, said rounded down
    assert "× the step-time interval (95 %): together at least 91.8 % (Bonferroni)" in c.interval


def test_a_higher_level_needs_more_seeds_and_says_its_coverage():
    base, fast = result("b", [120] * 6), result("t", [100] * 6)
    c = cu.compare_targets(base, fast, level=0.99)
    assert c.verdict == "not resolvable with 6 seeds" and "at least 8 paired seeds at 99.0 %" in c.summary()
    twelve = cu.compare_targets(result("b", [120] * 12, seeds=range(12)), result("t", [100] * 12, seeds=range(12)),
                                level=0.999)
    # 12 seeds at 99.9 % are [min, max], covering 1 - 2^-11: said as 99.95 %, not rounded up to a certainty
    assert twelve.verdict == "faster" and "covers the median steps ratio 99.95 %" in twelve.interval
    with pytest.raises(ValueError, match="level"):
        cu.compare_targets(base, fast, level=1.5)


def test_only_one_arm_on_most_seeds_is_not_said_as_every_seed():
    """Ranks 3 and 10 can both be 0 while two seeds saw the trick get there: no 'on any of the seeds'."""
    base = result("b", [300] * 12, seeds=range(12))
    trick = result("t", [None] * 10 + [250, 260], seeds=range(12))
    c = cu.compare_targets(base, trick)
    assert c.verdict == "slower" and c.low == c.high == 0
    assert "never reached" not in c.summary() and "in more steps" in c.summary()


def _simulated_verdicts(seeds, steps_effect, runs, rng, *, ratio_noise=0.05, time_noise=0.03):
    """Paired seeds with a shared difficulty; per-seed steps ratios ~ effect × log-normal(ratio_noise);
    the step-time comparison from 12 interleaved rounds of equal steps (log-normal time_noise)."""
    import numpy as np

    verdicts = []
    for _ in range(runs):
        shared = 300 * np.exp(rng.normal(0, 0.15, seeds))
        b = shared * np.exp(rng.normal(0, ratio_noise / math.sqrt(2), seeds))
        t = shared / steps_effect * np.exp(rng.normal(0, ratio_noise / math.sqrt(2), seeds))
        a, a2, bb = (1e-3 * np.exp(rng.normal(0, time_noise, 12)) for _ in range(3))
        c = cu.compare_targets(result("b", list(b), seeds=range(seeds)), result("t", list(t), seeds=range(seeds)),
                               step_comparison=cu.measure.analysis.analyze(a, a2, bb))
        verdicts.append(c.verdict)
    return verdicts


def test_power_does_not_fall_when_seeds_are_added_and_the_null_stays_under_5_percent():
    """1.1× fewer steps, 5 % noise per seed ratio: [min, max] found it 55 % at 6 seeds but 32 % at 12."""
    import numpy as np

    rng = np.random.default_rng(0)
    power = {n: _simulated_verdicts(n, 1.1, 300, rng).count("faster") / 300 for n in (6, 12)}
    assert power[12] >= power[6] and power[12] >= 0.7, power  # 0.55 and 0.85 in 4,000 runs each
    for n in (6, 12):
        null = _simulated_verdicts(n, 1.0, 400, rng)
        false = (null.count("faster") + null.count("slower")) / 400
        assert false <= 0.05, (n, false)


def test_a_target_that_is_not_an_accuracy_is_refused_before_any_seed_trains():
    trained = []

    def run(seed):
        trained.append(seed)
        return cu.History(loss=[1.0], step_time=[0.5], eval_step=[1], eval_accuracy=[0.9])

    for bad in (2.0, 90, 0, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"target=.* is not an accuracy: accuracies are fractions in \(0, 1\], "
                                             r"e\.g\. target=0\.9 for 90 %"):
            cu.steps_to_target(run, bad)
    for bad in ("0.9", True, None):
        with pytest.raises(TypeError, match=r"target is a test accuracy as a fraction \(e\.g\. 0\.9 for 90 %\)"):
            cu.steps_to_target(run, bad)
    assert trained == [], "no seed trained for a target that cannot be reached"
    assert cu.steps_to_target(run, 1.0, seeds=[0]).steps == [None] and trained == [0]  # 100 % is a target
    with pytest.raises(ValueError, match="target=80 is not an accuracy"):
        crossing_step([1, 2], [0.5, 0.9], 80)
    with pytest.raises(ValueError, match="target=80 is not an accuracy"):
        cu.TargetResult("b", 80, SEEDS, [1] * 6, 0.01)


def test_a_step_time_carry_over_widens_the_time_to_target_interval():
    """A carry-over the step comparison detected enters time to target through its widened interval."""
    import dataclasses

    import numpy as np

    a = np.ones(30)
    step = cu.measure.analysis.analyze(a, a, a / np.linspace(1.1, 1.2, 30))
    base = cu.TargetResult("b", 0.8, list(range(6)), [100.0] * 6, 1e-3)
    trick = cu.TargetResult("t", 0.8, list(range(6)), [99.0] * 6, 1e-3)
    assert cu.compare_targets(base, trick, step_comparison=step).verdict == "faster"
    carried = dataclasses.replace(step, carry_over=1.15, carry_over_ci=(1.05, 1.3))
    widened = cu.compare_targets(base, trick, step_comparison=carried)
    assert widened.low == pytest.approx(100 / 99 * step.ci[0] / 1.3) and widened.verdict != "faster"

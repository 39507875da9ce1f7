"""cu.calibration.calibrate: real A/A comparisons counted; the summary statistics checked on injected verdicts.

The statistics of a calibration (counts, exact intervals, flags, skewness, the table, saving and
loading) are pure functions of the trials, tested here without a clock. One small real calibration
(``clock``) checks that the pieces fit: two workloads, a few comparisons, saved to the session's
temporary results folder and read back. Whether its rates are under the label is chance, and is
not asserted.
"""

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import course_utils as cu
from course_utils.calibration.records import Trial, WorkloadResult, _skew
from course_utils.calibration.runner import Calibration, _split
from course_utils.calibration.workloads import WORKLOADS

NAN = float("nan")


def trials(verdicts, rounds=12, **kw):
    return [Trial(v, rounds, 1.0, (1e-3, 1e-3), [0.9, 1.1], **kw) for v in verdicts]


def workload(name="w", verdicts=(), true_speedup=1.0, carry=False, blocks=(), **kw):
    return WorkloadResult(name, f"{name} described", true_speedup, carry, 2.0, trials(verdicts, **kw),
                          [list(b) for b in blocks], "injected" if blocks else "", 1.0)


UNRESOLVED = "not resolvable on this hardware"


def test_counts_false_verdicts_and_their_exact_interval():
    w = workload(verdicts=["faster"] * 2 + ["slower"] + ["control failed"] * 3 + [UNRESOLVED] * 44)
    counts = [w.count(v) for v in ("faster", "slower", "control failed", UNRESOLVED)]
    assert (w.n, counts) == (50, [2, 1, 3, 44])
    assert w.false == 3
    assert "3/50 = 6.0% [" in str(Calibration("m", "cpu", "cpu", 1, 60.0, [w]))
    lo, hi = cu.measure.rates.binomial_ci(3, 50)
    assert f"[{lo:.1%}, {hi:.1%}]" in str(Calibration("m", "cpu", "cpu", 1, 60.0, [w]))
    assert w.flags == [], "3 of 50: the interval's lower end (1.3 %) is under the label"


def test_seed_level_not_resolvable_counts_as_not_resolvable():
    w = workload(verdicts=["not resolvable with 3 rounds of processes", UNRESOLVED])
    assert w.count(UNRESOLVED) == 2 and w.false == 0


def test_a_workload_is_flagged_when_its_interval_lies_above_the_label():
    w = workload(verdicts=["faster"] * 10 + [UNRESOLVED] * 40)
    assert cu.measure.rates.binomial_ci(10, 50)[0] > 0.05
    assert any(f.startswith("false verdicts at least") for f in w.flags)
    assert any(f.startswith("faster at least") for f in w.flags), "and on its side (label 2.5 %)"
    assert not any(f.startswith("slower") for f in w.flags)
    text = str(Calibration("m", "cpu", "cpu", 1, 60.0, [w]))
    assert "w (!)" in text and "flagged: w: false verdicts at least" in text


def test_the_label_is_one_sided_too():
    w = workload(verdicts=["slower"] * 5 + [UNRESOLVED] * 95)  # 5 %: not above 5 % in all, but 2.5 % a side
    assert cu.measure.rates.binomial_ci(5, 100)[0] < 0.05 < cu.measure.rates.binomial_ci(5, 100)[1]
    assert cu.measure.rates.binomial_ci(5, 100)[0] <= 0.025 and w.flags == []
    w = workload(verdicts=["slower"] * 8 + [UNRESOLVED] * 92)
    assert cu.measure.rates.binomial_ci(8, 100)[0] > 0.025 and w.flags and w.flags[-1].startswith("slower")


def test_totals_cover_only_the_aa_workloads():
    a = workload("a", ["faster", UNRESOLVED, UNRESOLVED])
    b = workload("b", ["slower", "control failed", UNRESOLVED, UNRESOLVED])
    carry = workload("c", ["faster"] * 5, carry=True)
    unknown = workload("u", ["slower"] * 3, true_speedup=None, carry=True)
    cal = Calibration("m", "cpu", "cpu", 1, 60.0, [a, b, carry, unknown])
    assert [w.name for w in cal.null] == ["a", "b"]
    assert cal.total("false") == (2, 7) and cal.total("faster") == (1, 7) and cal.total("control failed") == (1, 7)
    assert unknown.false is None and unknown.flags == []
    text = str(cal)
    assert any(line.startswith("all A/A") and "2/7" in line for line in text.splitlines())
    assert "carry-over pair 'c'" in text and "false verdicts 5/5" in text
    assert "carry-over pair 'u'" in text and "true speed-up not known" in text
    assert "not reported" in text  # no carry-over diagnostic in these trials


def test_carry_over_line_reads_the_diagnostic():
    w = workload("c", ["faster"] * 3, carry=True)
    w.trials[0] = dataclasses.replace(w.trials[0], carry_over=1.2, carry_over_ci=(1.1, 1.3), carry_warning=True)
    w.trials[1] = dataclasses.replace(w.trials[1], carry_over=1.0, carry_over_ci=(0.9, 1.1))
    line = w.carry_line()
    assert "median 1.100 [1.000–1.200] over 2" in line and "excludes 1 in 1" in line and "warned in 1" in line


def test_trial_reads_a_comparison_with_or_without_carry_over():
    c = cu.measure.analysis.analyze([1.0, 1.1, 0.9, 1.0, 1.05, 0.95], [1.0] * 6, [1.0, 1.02, 0.98, 1.0, 1.01, 0.99])
    t = Trial.of(c)
    assert t.verdict == c.verdict and t.rounds == 6 and t.ratios == pytest.approx(c.ratios)
    assert t.rerun is False and t.carry_warning is False
    old = dataclasses.replace(c, carry_over=None, carry_over_ci=None) if hasattr(c, "carry_over") else c
    assert math.isnan(Trial.of(old).carry_over) and all(math.isnan(x) for x in Trial.of(old).carry_over_ci)
    from course_utils.measure.engine import _carry_warning

    new = dataclasses.replace(c, carry_over=1.3, carry_over_ci=(1.1, 1.5))
    new = dataclasses.replace(new, warnings=_carry_warning(new))  # the engine's own words
    assert (Trial.of(new).carry_over, Trial.of(new).carry_warning) == (1.3, True)


def test_skewness_of_log_block_times():
    assert _skew([1.0, 2.0, 3.0]) == pytest.approx(0.0)
    assert math.isnan(_skew([1.0, 1.0, 1.0])) and math.isnan(_skew([1.0, 2.0]))
    rng = np.random.default_rng(0)
    right = np.exp(rng.exponential(1.0, 4000))  # log times exponential: skewness 2
    assert _skew(np.log(right)) == pytest.approx(2.0, abs=0.3)
    # three identical arms a round; the rounds drift, which the within-round skewness takes out
    blocks = [[math.exp(r / 10 + e) for e in rng.normal(0, 0.1, 3)] for r in range(200)]
    pooled, within = workload(blocks=blocks).skewness
    assert abs(within) < 0.3
    assert math.isnan(workload(blocks=[[1.0, 1.1]] * 5).skewness[1]), "within rounds needs 3 arms"
    assert all(math.isnan(x) for x in workload().skewness)


def test_share_of_ratios_above_one_and_median_rounds():
    w = workload(verdicts=[UNRESOLVED] * 3, rounds=12)
    w.trials[2] = dataclasses.replace(w.trials[2], rounds=30, ratios=[1.2, 1.3])
    assert w.above_one == pytest.approx(4 / 6) and w.median_rounds == 12  # 1 + 1 + 2 of 6


def test_comparisons_are_split_by_weight_and_add_up():
    weights = [w.weight for w in WORKLOADS.values()]
    for total in (7, 12, 200, 333):
        counts = _split(total, weights)
        assert sum(counts) == max(total, len(weights)) and min(counts) >= 1
    assert _split(12, [1, 1]) == [6, 6]
    assert sum(_split(200, weights)) == 200


def test_round_trip_through_json_keeps_the_table():
    w = workload("a", ["faster", UNRESOLVED], blocks=[[1e-3, 1.1e-3, 0.9e-3]] * 4)
    w.trials[0] = dataclasses.replace(w.trials[0], carry_over=1.2, carry_over_ci=(1.1, 1.3))
    cal = Calibration("m", "cpu", "cpu", 1, 60.0, [w, workload("c", ["slower"], true_speedup=None, carry=True)])
    d = json.loads(json.dumps(cal.to_dict(), allow_nan=False))  # NaN saved as null: strict JSON
    assert d["kind"] == "calibration"
    back = Calibration.from_dict(d)
    assert str(back) == str(cal)
    assert math.isnan(back.workloads[1].trials[0].carry_over)


def test_bad_arguments_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match="at least 1"):
        cu.calibration.calibrate(comparisons=0, save=False)
    with pytest.raises(ValueError, match="unknown workloads"):
        cu.calibration.calibrate(workloads=["no such"], save=False)
    with pytest.raises(ValueError, match="profile"):
        cu.calibration.calibrate(profile="huge", workloads=["add"], comparisons=1, save=False)


def test_no_calibration_yet_is_none(tmp_path):
    assert cu.calibration.load_calibration(tmp_path) is None


@pytest.mark.clock
def test_a_small_real_calibration_counts_saves_and_loads_back():
    add = dataclasses.replace(WORKLOADS["add"], budget=0.3, sweep_rounds=8, weight=3.0)
    processes = dataclasses.replace(WORKLOADS["processes"], weight=1.0)
    cal = cu.calibration.calibrate(comparisons=8, progress=False, workloads=[add, processes])
    assert [w.name for w in cal.workloads] == ["add", "processes"] and [w.n for w in cal.workloads] == [6, 2]
    for w in cal.workloads:
        kinds = [w.count(v) for v in ("faster", "slower", UNRESOLVED, "control failed")]
        assert sum(kinds) == w.n, f"{w.name}: every comparison has one of the four verdicts"
        assert w.false == kinds[0] + kinds[1] and all(t.rounds >= 6 for t in w.trials)
        assert all(len(t.ratios) == t.rounds for t in w.trials)
        assert len(w.blocks) >= 8 and all(len(b) >= 3 for b in w.blocks), "A, A′ and the trick's blocks"
    assert cal.total("false")[1] == 8 and cal.profile == "smoke" and cal.num_threads == 1
    assert all(w.n == 2 and w.trials[0].rounds == 6 for w in cal.workloads[1:]), "6 rounds of processes each"
    path = Path(os.environ["COURSE_RESULTS_DIR"]) / cal.machine / "calibration.smoke.json"
    saved = json.loads(path.read_text())
    assert saved["notebook"] == "calibration" and saved["env"]["torch_threads"] == 1
    assert saved["measurements"]["false_verdicts"]["kind"] == "effect"
    back = cu.calibration.load_calibration()
    assert back is not None and str(back) == str(cal) and back.saved_at == saved["saved_at"]
    assert any(r["notebook"] == "calibration" for r in cu.results.report.scoreboard().rows)

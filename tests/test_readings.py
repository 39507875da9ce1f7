"""cu.reading and cu.check_prediction: every verdict has its text, a prediction of None is said."""

import numpy as np
import pytest

import course_utils as cu

TEXTS = dict(faster="F", slower="S", not_resolvable="N", control_failed="C")


def comparison(trick_factor, control_factor=1.0):
    rng = np.random.default_rng(0)
    a = 1e-3 * np.exp(rng.normal(0, 0.01, 12))
    return cu.measure.analysis.analyze(a, a * control_factor, a / trick_factor)


def test_each_verdict_picks_its_own_text():
    assert cu.reading(comparison(1.5), **TEXTS) == "F"
    assert cu.reading(comparison(0.5), **TEXTS) == "S"
    assert cu.reading(comparison(1.0), **TEXTS) == "N"
    assert cu.reading(comparison(1.5, control_factor=0.8), **TEXTS) == "C"  # never the "N" text


def test_a_reading_that_leaves_a_verdict_out_is_refused():
    partial = {k: v for k, v in TEXTS.items() if k != "slower"}  # control_failed alone has a default
    with pytest.raises(TypeError, match="slower"):
        cu.reading(comparison(1.5), **partial)
    with pytest.raises(ValueError, match="empty"):
        cu.reading(comparison(1.5), **{**TEXTS, "slower": " "})
    with pytest.raises(TypeError, match="verdict"):
        cu.reading(1.5, **TEXTS)


def test_texts_can_be_functions_of_the_result():
    c = comparison(2.0)
    assert cu.reading(c, **{**TEXTS, "faster": lambda r: f"{r.speedup:.0f}x"}) == "2x"


def test_seed_level_not_resolvable_reads_as_not_resolvable():
    base = cu.TargetResult("b", 0.8, [0, 1, 2], [10, 10, 10], 0.01)
    assert cu.reading(cu.compare_targets(base, base), **TEXTS) == "N"


def test_prediction_none_is_no_prediction_recorded(capsys):
    line = cu.check_prediction(None, comparison(1.5))
    assert line.startswith("no prediction recorded; measured") and "you predicted" not in line
    assert cu.check_prediction(1.5, comparison(1.5)).startswith("you predicted 1.5×")
    with pytest.raises(TypeError, match="as a number"):
        cu.check_prediction(..., comparison(1.5))


def test_a_missing_control_failed_text_states_the_failed_control_s_own_numbers():
    partial = {k: v for k, v in TEXTS.items() if k != "control_failed"}
    failed = comparison(1.5, control_factor=0.8)
    text = cu.reading(failed, **partial)
    assert text == cu.results.readings.control_failed_text(failed)
    assert text.startswith("No conclusion (") and "against its own copy gave" in text and text != "N"
    assert f"{failed.aa_ci[0]:.3f}" in text and failed.span() in text  # the control's numbers and the arms'
    assert cu.reading(comparison(1.5), **partial) == "F"  # the default is read only for "control failed"


def test_the_default_names_a_carry_over_and_a_seed_level_control():
    import dataclasses

    failed = comparison(1.5, control_factor=0.8)
    carried = dataclasses.replace(failed, aa_ci=(0.99, 1.01), carry_over=1.2, carry_over_ci=(1.1, 1.3))
    assert "carry-over" in cu.results.readings.control_failed_text(carried)
    assert "fresh processes" in cu.results.readings.control_failed_text(carried)
    base = cu.TargetResult("b", 0.8, list(range(6)), [10, 11, 12, 10, 11, 12], 0.01)
    trick = cu.TargetResult("t", 0.8, list(range(6)), [9, 10, 11, 9, 10, 11], 0.01)
    t = cu.compare_targets(base, trick, step_comparison=failed)
    assert t.verdict == "control failed"
    text = cu.reading(t, faster="F", slower="S", not_resolvable="N")
    assert text.startswith("No conclusion. Control failed in the step-time comparison") and "step-time" in text

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
    partial = {k: v for k, v in TEXTS.items() if k != "control_failed"}
    with pytest.raises(TypeError, match="control_failed"):
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

"""Forced verdicts (course_utils.measure.forcing) and sentences built from their numbers (measure.wording)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import course_utils as cu
from course_utils.measure import forcing
from course_utils.measure.rates import HIGHER, LOWER

SEEDS = range(6)


def target(base_steps, trick_steps, step=(1.0, 0.98, 1.02, "not resolvable on this hardware")):
    a = cu.TargetResult("base", 0.8, list(SEEDS), list(base_steps), 0.01)
    b = cu.TargetResult("trick", 0.8, list(SEEDS), list(trick_steps), 0.01)
    return cu.compare_targets(a, b, step_comparison=step_cmp(*step))


def step_cmp(speedup, lo, hi, verdict):
    a = np.full(12, 1e-3)
    c = cu.measure.analysis.analyze(a, a, a / speedup)
    c.ci, c.verdict, c.speedup = (lo, hi), verdict, speedup
    return c


# --- wording -----------------------------------------------------------------------------------

def test_per_seed_counts_ties_and_losses_instead_of_every_seed():
    t = target([568, 622, 583, 647, 565, 523], [644, 624, 719, 647, 634, 595], step=(0.9, 0.839, 0.995, "slower"))
    assert t.seed_counts() == (0, 1, 5, 0)
    assert t.per_seed() == "in steps, trick took fewer than base on 0 of 6 seeds, the same on 1 and more on 5"
    assert t.verdict == "slower" and t.carried_by() == "step time"
    assert t.basis().startswith("the sign comes from the step-time interval alone ([0.839, 0.995], slower per step)")


def test_steps_alone_and_both_and_neither():
    faster_steps = target([300] * 6, [200] * 6)
    assert faster_steps.verdict == "faster" and faster_steps.carried_by() == "steps" and faster_steps.basis() == ""
    both = target([300] * 6, [200] * 6, step=(1.2, 1.1, 1.3, "faster"))
    assert both.carried_by() == "both"
    mixed = target([300, 200, 300, 200, 300, 200], [200, 300, 200, 300, 200, 300])
    assert mixed.carried_by() == "neither" and mixed.seed_counts() == (3, 0, 3, 0)


def test_per_seed_names_seeds_where_an_arm_never_got_there():
    t = target([300, None, 300, 300, 300, 300], [200, 200, None, 300, 250, 240])
    fewer, tied, more, missing = t.seed_counts()
    assert (fewer, tied, more, missing) == (3, 1, 0, 2)
    assert "only trick got there on 1" in t.per_seed() and "only base on 1" in t.per_seed()


def test_ratio_text_keeps_digits_and_verdict():
    c = step_cmp(1.10, 0.901, 1.541, "not resolvable on this hardware")
    assert c.ratio_text() == "1.10× [0.90, 1.54] (not resolvable on this hardware)"
    assert step_cmp(1.004, 1.001, 1.008, "faster").ratio_text() == "1.004× [1.001, 1.008] (faster)"


def test_medians_text_says_it_is_not_the_comparison_and_flags_a_contradiction():
    a = np.full(12, 1.45e-3)
    c = cu.measure.analysis.analyze(a, a, a / 0.861)
    c.median_s = (1.45e-3, 1.35e-3)  # the arms' own medians say the trick is faster
    c.verdict, c.ci = "slower", (0.803, 0.947)
    text = c.medians_text()
    assert "not the comparison" in text and "point the other way" in text and "1.45 ms" in text


def test_an_arm_medians_contradiction_is_a_warning_of_the_engine():
    from course_utils.measure.analysis import medians_warning

    a = np.full(12, 1.45e-3)
    c = cu.measure.analysis.analyze(a, a, a / 0.861)
    assert not any("point the other way" in w for w in c.warnings)
    c.median_s = (1.45e-3, 1.35e-3)
    assert medians_warning(c) and "point the other way" in medians_warning(c)[0]


def test_control_failure_names_carry_over_or_identical_arms():
    a = np.full(12, 1e-3)
    c = cu.measure.analysis.analyze(a, a, a)
    assert c.control_failure() == ""
    failed = forcing.as_verdict(c, "control failed")
    assert failed.control_failure().startswith("two identical arms differed")
    import dataclasses
    carry = dataclasses.replace(c, verdict="control failed", carry_over=1.08, carry_over_ci=(1.03, 1.12))
    assert carry.control_failure().startswith("a carry-over: the baseline's blocks right after trick took 1.080×")


# --- forcing -----------------------------------------------------------------------------------

@pytest.mark.parametrize("forced", list(forcing.FORCEABLE))
def test_a_forced_verdict_comes_with_numbers_that_earn_it(monkeypatch, forced):
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv(forcing.FORCE_ENV, forced)
    want = forcing.FORCEABLE[forced]
    c = cu.compare(lambda: sum(range(50)), lambda: sum(range(50)), rounds=6, budget=1.0, progress=False)
    assert c.verdict == want and cu.measure.stats.verdict(c.ci, c.aa_ci) == want
    assert forcing.NOTE in c.warnings
    t = target([300] * 6, [200] * 6)
    assert cu.measure.stats.verdict_kind(t.verdict) == want
    assert (t.low > 1) == (want == "faster") and (t.high < 1) == (want == "slower")
    r = cu.compare_rates(cu.rate([True] * 6, what="diverged", seeds=list(SEEDS)),
                         cu.rate([False] * 6, what="diverged", seeds=list(SEEDS)))
    assert r.verdict == {"faster": LOWER, "slower": HIGHER}.get(forced, "not resolvable with 6 seeds")


def test_forcing_names_a_rate_comparison_s_verdicts_as_rates_does():
    assert (forcing.LOWER, forcing.HIGHER) == (LOWER, HIGHER)


def test_forcing_is_refused_outside_the_smoke_profile_and_on_a_bad_value(monkeypatch):
    monkeypatch.setenv(forcing.FORCE_ENV, "faster")
    monkeypatch.setenv("COURSE_PROFILE", "cpu")
    with pytest.raises(ValueError, match="only in the smoke profile"):
        forcing.forced()
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv(forcing.FORCE_ENV, "quicker")
    with pytest.raises(ValueError, match="use one of faster, slower, not_resolvable, control_failed"):
        forcing.forced()
    monkeypatch.delenv(forcing.FORCE_ENV)
    assert forcing.forced() is None


def test_reading_builds_every_branch_and_logs_the_one_printed(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv(forcing.FORCE_ENV, "slower")
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(forcing.FORCE_LOG_ENV, str(log))
    a = np.full(12, 1e-3)
    c = forcing.apply(cu.measure.analysis.analyze(a, a, a))
    built = []

    def faster(r):
        built.append(r.verdict)
        return f"faster by {r.speedup:.2f}×"

    text = cu.reading(c, faster=faster, slower=lambda r: f"slower: {r.time_ratio:.2f}× the time",
                      not_resolvable="no verdict", control_failed=lambda r: r.control_failure())
    assert text == "slower: 1.50× the time" and built == ["faster"]  # the faster branch was built too
    entry = json.loads(log.read_text())
    assert entry["forced"] == "slower" and entry["kind"] == "slower" and entry["text"] == text

    def broken(r):
        raise ZeroDivisionError("a branch that cannot be formatted")

    with pytest.raises(ZeroDivisionError):
        cu.reading(c, faster=broken, slower="s", not_resolvable="n", control_failed="c")


def test_any_run_can_log_its_readings_beside_their_numbers(monkeypatch, tmp_path):
    from tools.run_notebooks import READINGS_LOG, readings_page

    monkeypatch.delenv(forcing.FORCE_ENV, raising=False)
    folder = tmp_path / "build" / "01_lr_schedules"
    folder.mkdir(parents=True)
    monkeypatch.setenv(forcing.READINGS_LOG_ENV, str(folder / READINGS_LOG))
    t = target([568, 622, 583, 647, 565, 523], [644, 624, 719, 647, 634, 595], step=(0.9, 0.839, 0.995, "slower"))
    text = cu.reading(t, faster="sooner", slower=lambda r: f"later; {r.basis()}", not_resolvable="no verdict",
                      control_failed="no control")
    page = readings_page(tmp_path / "build", [tmp_path / "solutions" / "01_lr_schedules" / "x.ipynb"])
    assert "## 01_lr_schedules (1 reading)" in page and text in page
    assert "trick vs base: " in page and "the same on 1 and more on 5" in page  # the numbers it read


def test_reversed_reads_the_same_rounds_the_other_way(monkeypatch):
    a = np.full(12, 1e-3) * (1 + 0.01 * np.arange(12))
    c = cu.measure.analysis.analyze(a, a, a * 3.0)  # the trick takes three times as long: slower
    r = c.reversed()
    assert c.verdict == "slower" and r.verdict == "faster" and r.names == c.names[::-1]
    assert r.speedup == pytest.approx(1 / c.speedup) and r.ci == pytest.approx((1 / c.ci[1], 1 / c.ci[0]))
    assert r.median_s == c.median_s[::-1] and r.reversed().ci == pytest.approx(c.ci)
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv(forcing.FORCE_ENV, "slower")
    assert c.reversed().verdict == "slower"  # forced like any result the engine builds


def test_a_reading_nested_in_a_branch_not_printed_is_not_logged(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv(forcing.FORCE_ENV, "faster")
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv(forcing.FORCE_LOG_ENV, str(log))
    a = np.full(12, 1e-3)
    c = forcing.apply(cu.measure.analysis.analyze(a, a, a))
    inner = dict(faster="inner faster", slower="inner slower", not_resolvable="inner n", control_failed="inner c")
    text = cu.reading(c, faster="outer faster", slower=lambda r: "outer slower; " + cu.reading(c, **inner),
                      not_resolvable="n", control_failed="c")
    assert text == "outer faster"
    assert [json.loads(x)["text"] for x in log.read_text().splitlines()] == ["outer faster"]


def test_per_seed_text_lists_each_seed_and_says_once_what_the_marks_mean():
    t = target([300, None, 300, 300, 300, None], [200, 200, None, 300, 250, None])
    assert t.per_seed_text() == ("1.50×, ∞, 0, 1.00×, 1.20×, n/a (∞: only trick got there; 0: only base got there; "
                                 "n/a: neither got there)")
    assert target([300] * 6, [200] * 6).per_seed_text() == ", ".join(["1.50×"] * 6)  # no marks, no legend


def test_span_is_the_ratio_text_without_the_verdict():
    assert step_cmp(1.10, 0.901, 1.541, "not resolvable on this hardware").span() == "1.10× [0.90, 1.54]"
    assert step_cmp(1.004, 1.001, 1.008, "faster").span() == "1.004× [1.001, 1.008]"

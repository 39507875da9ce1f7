"""TimingOptions: the engine's shared keyword arguments as one frozen, checked record.

compare and sweep keep their keyword arguments for learners, build one TimingOptions and pass it
down to the engine; the spy on ``engine.measure`` sees exactly what they built. Injected times
(tests/clock.py): no wall clock is read.
"""

import dataclasses
import inspect
import re

import pytest
import torch

import course_utils as cu
from course_utils.env import get_profile
from course_utils.measure import engine
from course_utils.measure.clock import BUDGETS
from course_utils.measure.options import TimingOptions

from clock import inject_arm_seconds

CPU = torch.device("cpu")
#: The keyword defaults of cu.compare before the options record (budget and device: None, resolved later).
OLD_COMPARE = dict(rounds=None, budget=None, warmup=2, num_threads=None, min_round_time=0.02, device=None,
                   level=0.95, min_effect=1.0, seed=0, rerun=True, progress=None)
#: cu.sweep's: the same but one warm-up call.
OLD_SWEEP = {**OLD_COMPARE, "warmup": 1}
FIELDS = [f.name for f in dataclasses.fields(TimingOptions)]


def base():
    return None


def trick():
    return None


def other():
    return None


@pytest.fixture
def seen(monkeypatch):
    """The options every measurement got (the spy calls the real engine.measure on injected times)."""
    inject_arm_seconds(monkeypatch, {base: 2e-3, trick: 1e-3, other: 3e-3})
    got = []
    real = engine.measure

    def spy(fns, labels, baseline, **kw):
        got.append(kw["opts"])
        return real(fns, labels, baseline, **kw)

    monkeypatch.setattr(engine, "measure", spy)
    return got


def test_the_options_hold_the_eleven_shared_keywords_with_the_old_defaults():
    assert FIELDS == list(OLD_COMPARE)
    for public, old in ((cu.compare, OLD_COMPARE), (cu.sweep, OLD_SWEEP)):
        params = inspect.signature(public).parameters
        assert {f: params[f].default for f in FIELDS} == old, public.__name__
    opts = TimingOptions(budget=1.0, device=CPU)
    assert {f: getattr(opts, f) for f in FIELDS} == {**OLD_COMPARE, "budget": 1.0, "device": CPU}


def test_the_options_are_frozen_and_keyword_only():
    opts = TimingOptions(budget=1.0, device=CPU)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.rounds = 12
    with pytest.raises(TypeError):
        TimingOptions(None, 1.0)  # positional: which one is which?
    assert dataclasses.replace(opts, seed=1).seed == 1 and opts.seed == 0
    assert hash(opts) == hash(TimingOptions(budget=1.0, device=CPU))


@pytest.mark.parametrize(("field", "value", "error", "words"), [
    ("rounds", 0, ValueError, "rounds must be a whole number, at least 1"),
    ("rounds", 6.5, TypeError, "rounds must be a whole number"),
    ("budget", 0, ValueError, "budget must be positive seconds, got 0"),
    ("budget", float("nan"), ValueError, "budget must be positive seconds"),
    ("budget", "2 s", TypeError, "budget must be positive seconds, got '2 s'"),
    ("warmup", -1, ValueError, "warmup must be a whole number of calls, 0 or more, got -1"),
    ("warmup", True, TypeError, "warmup must be a whole number"),
    ("num_threads", 0, ValueError, "num_threads must be a whole number, at least 1"),
    ("min_round_time", -0.1, ValueError, "min_round_time must be seconds, 0 or more"),
    ("min_round_time", float("inf"), ValueError, "min_round_time must be seconds"),
    ("level", 95, ValueError, "level must be a coverage between 0 and 1, such as 0.95, got 95"),
    ("min_effect", 0.9, ValueError, "min_effect must be a speed-up of at least 1.0"),
    ("seed", None, TypeError, "seed must be a whole number, got None"),
    ("rerun", "yes", TypeError, "rerun must be True or False"),
    ("progress", 1, TypeError, "progress must be True, False or None"),
    ("device", "cpu", TypeError, "device must be a torch.device here"),
])
def test_a_wrong_value_is_named_in_words(field, value, error, words):
    with pytest.raises(error, match=re.escape(words)):
        TimingOptions(**{"budget": 1.0, "device": CPU, field: value})


def test_the_values_lessons_pass_are_accepted():
    import numpy as np

    TimingOptions(budget=np.float64(2.0), device=CPU, rounds=np.int64(12), min_round_time=0, num_threads=1,
                  warmup=0, level=0.99, min_effect=1.05, seed=10_000, rerun=False, progress=False)
    TimingOptions(budget=float("inf"), device=CPU)


def test_for_arms_checks_the_device_and_fills_in_the_profile_budget():
    profile_budget = BUDGETS[get_profile(CPU)]
    assert TimingOptions.for_arms(2, device="cpu") == TimingOptions(budget=profile_budget, device=CPU)
    assert TimingOptions.for_arms(5, device=CPU).budget == profile_budget * 2
    assert TimingOptions.for_arms(5, budget=0.5, device=CPU, seed=3) == TimingOptions(budget=0.5, device=CPU, seed=3)
    with pytest.raises(ValueError, match="names no device"):
        TimingOptions.for_arms(2, device="gpu")
    with pytest.raises(TypeError, match="unexpected keyword argument 'round'"):
        TimingOptions.for_arms(2, device=CPU, round=6)


def test_the_rounds_an_interval_needs_are_checked_per_table():
    opts = TimingOptions(budget=1.0, device=CPU, rounds=6)
    assert opts.check_rounds(1) == 6
    with pytest.raises(ValueError, match="rounds must be at least 7 for 2 intervals that hold together with 95 %"):
        opts.check_rounds(2)
    assert TimingOptions(budget=1.0, device=CPU).check_rounds(8) == 9


def test_compare_passes_its_keywords_down_as_one_record(seen):
    cu.compare(base, trick)
    device = cu.env.choose_device()
    assert seen[0] == TimingOptions(budget=BUDGETS[get_profile(device)], device=device)
    seen.clear()
    given = dict(rounds=7, budget=3.0, warmup=0, num_threads=1, min_round_time=0.0, level=0.9, min_effect=1.05,
                 seed=4, rerun=False, progress=False)
    cu.compare(base, trick, device="cpu", **given)
    assert seen == [TimingOptions(device=CPU, **given)]


def test_sweep_passes_its_keywords_down_as_one_record(seen):
    arms = {"base": base, "trick": trick, "other": other}
    cu.sweep(arms)
    device = cu.env.choose_device()
    assert seen[0] == TimingOptions(budget=BUDGETS[get_profile(device)] * 4 / 3, device=device, warmup=1)
    seen.clear()
    given = dict(rounds=9, budget=2.5, warmup=3, num_threads=1, min_round_time=0.001, level=0.9, min_effect=1.1,
                 seed=7, rerun=False, progress=False)
    cu.sweep(arms, device=CPU, **given)
    assert seen == [TimingOptions(device=CPU, **given)]


def test_a_wrong_keyword_fails_before_any_arm_runs(seen):
    calls = []
    with pytest.raises(ValueError, match="min_effect"):
        cu.compare(lambda: calls.append(1), trick, min_effect=0.5)
    with pytest.raises(TypeError, match="warmup"):
        cu.sweep({"a": lambda: calls.append(1), "b": trick}, warmup=1.5)
    assert calls == [] and seen == []

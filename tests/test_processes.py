"""cu.in_processes: every run in a fresh interpreter, arms alternated, results back as data."""

import os
import random
import time

import numpy as np
import pytest

import course_utils as cu
from course_utils.measure import processes
from course_utils.measure.processes import CONTROL, ProcessRuns
from course_utils.measure.rounds import latin_orders

from clock import retried

TARGET = '''
import os

import torch

CALLS = 0


def measure(benchmark, value):
    global CALLS
    CALLS += 1  # a fresh process sees its first call, whatever ran before
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = benchmark
    return {"calls": CALLS, "flag_before": before, "flag": torch.backends.cudnn.benchmark, "pid": os.getpid(),
            "t": value, "var": os.environ.get("COURSE_TEST_VAR")}


def broken(**kwargs):
    raise ValueError("this arm is broken on purpose")


def sleepy(**kwargs):
    import time

    time.sleep(60)
    return {}
'''


def test_each_run_is_a_fresh_process_and_arms_alternate(tmp_path):
    path = tmp_path / "target.py"
    path.write_text(TARGET)
    runs = cu.in_processes(f"{path}:measure", {"off": {"benchmark": False, "value": 1.0},
                                               "on": {"benchmark": True, "value": 0.5}}, rounds=1, progress=False)
    assert set(runs.results) == {"off", CONTROL, "on"} and runs.rounds == 1
    assert sorted(runs.order[0]) == sorted(["off", CONTROL, "on"])
    pids = {r["pid"] for rs in runs.results.values() for r in rs}
    assert len(pids) == 3, "every run of every arm gets its own process"
    for rs in runs.results.values():
        assert rs[0]["calls"] == 1 and rs[0]["flag_before"] is False  # nothing carried over
    assert runs.values("on", "flag") == [True] and runs.values(CONTROL, "flag") == [False]
    assert all(w > 0 for ws in runs.wall_s.values() for w in ws)
    assert runs.to_dict()["kind"] == "process_runs"


@pytest.mark.clock  # a run past its timeout is killed in seconds (retried: the bound is wall time)
def test_preloaded_runs_are_fresh_processes_too(tmp_path):
    path = tmp_path / "target.py"
    path.write_text(TARGET)
    runs = cu.in_processes(f"{path}:measure", {"off": {"benchmark": False, "value": 1.0},
                                               "on": {"benchmark": True, "value": 0.5}}, rounds=2, progress=False,
                           preload=("torch",), env={"COURSE_TEST_VAR": "x"})
    pids = {r["pid"] for rs in runs.results.values() for r in rs}
    assert len(pids) == 6, "every run of every arm gets its own process"
    for rs in runs.results.values():
        assert all(r["calls"] == 1 and r["flag_before"] is False for r in rs)  # nothing carried over
    assert runs.values("on", "flag") == [True, True] and runs.values(CONTROL, "flag") == [False, False]
    assert runs.values("on", "var") == ["x", "x"], "the run's environment reaches the forked process"
    assert "imported torch" in str(runs) and runs.to_dict()["preload"] == ["torch"]
    with pytest.raises(RuntimeError, match=r"(?s)arm 'bad'.*broken on purpose"):
        cu.in_processes(f"{path}:broken", {"bad": {}}, rounds=1, control=False, progress=False, preload=("torch",))

    def killed_after(seed):
        started = time.perf_counter()
        with pytest.raises(RuntimeError, match="past its 2 s timeout"):
            cu.in_processes(f"{path}:sleepy", {"slow": {}}, rounds=1, control=False, progress=False,
                            preload=("torch",), timeout=2)
        return time.perf_counter() - started

    assert retried(killed_after, lambda s: s < 30) < 30, "a run past its timeout is killed, not waited for"
    with pytest.raises(ValueError, match="another python"):
        cu.in_processes(f"{path}:measure", {"a": {}}, preload=("torch",), python="/usr/bin/python3")


def test_a_failing_arm_says_which_and_why(tmp_path):
    path = tmp_path / "target.py"
    path.write_text(TARGET)
    with pytest.raises(RuntimeError, match=r"(?s)arm 'bad'.*broken on purpose"):
        cu.in_processes(f"{path}:broken", {"bad": {}}, rounds=1, control=False, progress=False)


def test_bad_arguments_are_refused_before_any_process_starts():
    with pytest.raises(ValueError, match="module:function"):
        cu.in_processes("no_function_here", {"a": {}})
    with pytest.raises(ValueError, match="JSON"):
        cu.in_processes("m:f", {"a": {"x": object()}})
    with pytest.raises(ValueError, match="second copy"):
        cu.in_processes("m:f", {CONTROL: {}})


def test_compare_reads_rounds_of_processes_as_rounds():
    rng = np.random.default_rng(1)  # an A/A control that passes (seed 0's fails by chance, as 1 % do)
    base, copy, trick = (1e-2 * np.exp(rng.normal(0, 0.02, 8)) for _ in range(3))
    runs = ProcessRuns(target="m:f", arms={"off": {}, "on": {}}, baseline="off",
                       results={"off": [{"t": t} for t in base], CONTROL: [{"t": t} for t in copy],
                                "on": [{"t": t / 1.5} for t in trick]}, order=[["off", CONTROL, "on"]] * 8)
    c = runs.compare("t", "on")
    assert c.verdict == "faster" and c.speedup == pytest.approx(1.5, rel=0.05)
    with pytest.raises(KeyError, match="returned no 'x'"):
        runs.values("on", "x")
    no_control = ProcessRuns(target="m:f", arms={"off": {}}, baseline="off", results={"off": [{"t": 1.0}]})
    with pytest.raises(ValueError, match="A/A control"):
        no_control.compare("t", "off")


def test_too_few_rounds_is_no_verdict():
    runs = ProcessRuns(target="m:f", arms={"off": {}, "on": {}}, baseline="off",
                       results={"off": [{"t": 1.0}, {"t": 1.1}], CONTROL: [{"t": 1.0}, {"t": 1.05}],
                                "on": [{"t": 0.5}, {"t": 0.55}]}, order=[["off", CONTROL, "on"]] * 2)
    c = runs.compare("t", "on")
    assert c.verdict == "not resolvable with 2 rounds of processes" and "too few" in c.interval
    assert cu.reading(c, faster="F", slower="S", not_resolvable="N", control_failed="C") == "N"


# --- arm orders: random Latin squares, a fresh seed per call, recorded (review D8) ---

@pytest.fixture
def no_processes(monkeypatch):
    """Replace the fresh interpreter by a call that returns at once, recording the order of the runs."""
    ran = []

    def fake(target, kwargs, *, python, env, timeout, arm):
        ran.append(arm)
        return {"t": 1.0}, 0.01

    monkeypatch.setattr(processes, "_run_one", fake)
    return ran


ARMS = {"off": {}, "on": {}}


def test_orders_put_every_arm_in_every_position_once_per_block(no_processes):
    runs = cu.in_processes("m:f", ARMS, rounds=6, seed=123, progress=False)
    keys = ["off", CONTROL, "on"]
    assert no_processes == [arm for order in runs.order for arm in order]  # the processes ran in that order
    for start in (0, 3):  # two blocks of 3 rounds for 3 arms
        block = runs.order[start:start + 3]
        for pos in range(3):
            assert sorted(order[pos] for order in block) == sorted(keys), block
    firsts = {cu.in_processes("m:f", ARMS, rounds=3, progress=False).order[0][0] for _ in range(30)}
    assert firsts == set(keys), "the baseline is not always the first process of a run"


def test_calls_without_a_seed_get_fresh_orders_and_record_their_seed(no_processes):
    calls = [cu.in_processes("m:f", ARMS, rounds=6, progress=False) for _ in range(3)]
    assert len({r.seed for r in calls}) == 3 and all(isinstance(r.seed, int) for r in calls)
    assert len({str(r.order) for r in calls}) > 1  # all three equal by chance: about 1 in 20,000
    again = cu.in_processes("m:f", ARMS, rounds=6, progress=False, seed=calls[0].seed)
    assert again.order == calls[0].order and again.seed == calls[0].seed  # a seed reproduces the orders
    assert [tuple(o) for o in again.order] == latin_orders(6, ["off", CONTROL, "on"], random.Random(again.seed))
    assert again.to_dict()["seed"] == again.seed and f"seed={again.seed}" in str(again)
    for bad in (-1, "x", True, 1.5):
        with pytest.raises(ValueError, match="seed must be a whole number"):
            cu.in_processes("m:f", ARMS, rounds=1, progress=False, seed=bad)


def test_a_preload_that_initialises_cuda_is_refused(tmp_path):
    # A child forked after CUDA was initialised in its parent cannot use the GPU. No GPU here, so the preloaded
    # module claims an initialised CUDA the way torch.cuda.is_initialized() would report one.
    from course_utils.procs._forkserver import ForkServer

    (tmp_path / "touches_cuda.py").write_text("import torch\ntorch.cuda.is_initialized = lambda: True\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    with pytest.raises(RuntimeError, match="initialised CUDA in the preloading process"):
        ForkServer(["torch", "touches_cuda"], env)
    ForkServer(["torch"], env).close()  # the control: a plain torch import is fine

"""The capstone's speed-run script: fixes as switches, device choices, one test evaluation, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from course_utils.capstone import cli as speedrun_cli
from course_utils.capstone import speedrun
from course_utils.capstone.fixes import NAIVE_BATCH, NAIVE_LR, DeviceInfo, Stack, fast_config, no_op_here, no_ops_here


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> speedrun.Prepared:
    mp = pytest.MonkeyPatch()
    mp.setenv("COURSE_DATA", str(tmp_path_factory.mktemp("data")))
    try:
        yield speedrun.prepare("digits", "smoke", verbose=False)
    finally:
        mp.undo()


def test_stack_names_and_a_misspelt_fix() -> None:
    assert Stack.naive().name == "naive" and Stack.full().name == "full stack"
    assert Stack.naive(["amp"]).name == "naive + amp"
    assert Stack.full(["amp"]).name == "full stack − amp"
    with pytest.raises(ValueError, match="unknown fix.*decode_once"):
        Stack.full(["ampp"])


@pytest.mark.parametrize("info, dtype, workers, pin, batch", [
    (DeviceInfo("cuda", "Tesla T4", (7, 5), 2), torch.float16, 1, True, 256),
    (DeviceInfo("cuda", "NVIDIA A100", (8, 0), 16), torch.bfloat16, 8, True, 256),
    (DeviceInfo("cuda", "NVIDIA H100", (9, 0), 32), torch.bfloat16, 8, True, 256),
    (DeviceInfo("cpu", "cpu", None, 2, cpu_bf16=True), torch.bfloat16, 1, False, 32),
    (DeviceInfo("cpu", "cpu", None, 1, cpu_bf16=False), None, 0, False, 32),
    (DeviceInfo("mps", "mps", None, 8), torch.float16, 7, False, 128),
])
def test_fast_config_per_device(info: DeviceInfo, dtype: torch.dtype | None, workers: int, pin: bool,
                                batch: int) -> None:
    cfg = fast_config(info)
    assert (cfg.amp_dtype, cfg.num_workers, cfg.pin_memory, cfg.batch_size) == (dtype, workers, pin, batch)
    assert cfg.lr == pytest.approx(NAIVE_LR * batch / NAIVE_BATCH)
    assert 0 < cfg.warmup < 1


def test_a_run_evaluates_the_test_set_once_at_the_end(prepared: speedrun.Prepared) -> None:
    r = speedrun.run_once(Stack.naive(), prepared, seed=0, device="cpu", target=0.3)
    tests = [i for i, e in enumerate(r.log) if e.get("split") == "test"]
    assert len(tests) == 1 and [e["event"] for e in r.log[tests[0] + 1:]] == ["end"]
    assert all(e["split"] == "val" for e in r.log[:tests[0]] if e["event"] == "eval")
    assert r.time_to_target is not None and r.time_to_target > 0 and r.val_accuracy >= 0.3
    assert r.log[tests[0] - 1] == {"step": r.steps, "event": "stop", "by": "val"}
    json.dumps(r.to_dict())


def test_an_unreached_target_runs_the_whole_budget(prepared: speedrun.Prepared) -> None:
    r = speedrun.run_once(Stack.full(["amp"]), prepared, seed=1, device="cpu", target=0.9999)
    assert r.time_to_target is None
    assert r.steps == speedrun.PROFILES["smoke"].budget_examples // 32
    assert not any(e["event"] == "stop" for e in r.log)


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "0"], "--seeds must be at least 1"),
    (["--target", "1.5"], "--target is an accuracy"),
    (["--target", "62"], "did you mean 0.62?"),
    (["--threads", "0"], "--threads must be at least 1"),
    (["--naive", "--without", "amp"], "--naive runs no fix"),
    (["--without", "nope"], "invalid choice: 'nope'"),
    (["--dataset", "imagenet"], "--dataset must be one of"),
])
def test_bad_arguments_get_a_clear_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        speedrun_cli.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def _cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: ANN001
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("COURSE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("COURSE_PROFILE", "smoke")


@pytest.mark.slow  # trains the naive script on two seeds and a warm-up run
def test_the_cli_saves_a_complete_result(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:  # noqa: ANN001
    _cli_env(monkeypatch, tmp_path)
    assert speedrun_cli.main(["--naive", "--seeds", "2", "--dataset", "digits", "--target", "0.3"]) == 0
    [saved] = (tmp_path / "results").rglob("speedrun_cli.smoke.json")
    m = json.loads(saved.read_text())["measurements"]
    assert [r["seed"] for r in m["runs"]] == [0, 1] and all(r["stack"] == "naive" for r in m["runs"])
    assert m["partial"] is False and m["reached"] == "2/2" and m["seeds_asked"] == 2
    out = capsys.readouterr().out
    assert "time to 30% validation accuracy, median" in out and "over all 2 seed(s)" in out
    assert "the 30% target (evaluated once, at the end)" in out  # test accuracy against the target, per seed
    assert "torch threads set to 1" in out  # pinned like lesson 19


def test_the_median_counts_a_seed_that_never_got_there_as_infinitely_slow() -> None:
    assert speedrun_cli.median_time([1.0, 2.0, None]) == 2.0  # not the survivors' 1.5
    assert speedrun_cli.median_time([1.0, None, None]) == float("inf")
    line = speedrun_cli.headline_text("full stack", 0.62, [1.0, 2.0, None])
    assert "median 2.00 s over all 3 seed(s)" in line and "2 of 3 seed(s) reached it" in line
    assert "1.00 s to never" in line
    missed = speedrun_cli.headline_text("full stack", 0.62, [1.0, None, None])
    assert "median not reached" in missed and "1 of 3 seed(s) reached it" in missed
    assert "median not reached" in speedrun_cli.headline_text("naive", 0.62, [1.0, None])  # half missed


def test_an_interrupted_run_saves_the_finished_seeds_as_partial(monkeypatch: pytest.MonkeyPatch, tmp_path,
                                                                 capsys) -> None:  # noqa: ANN001
    _cli_env(monkeypatch, tmp_path)
    calls = []

    def interrupted(stack, prepared, *, seed, **kwargs):  # noqa: ANN001, ANN003, ANN202
        calls.append(seed)
        if len(calls) == 3:  # the warm-up, seed 0, then Ctrl-C during seed 1
            raise KeyboardInterrupt
        return speedrun.RunResult(stack.name, seed, 0.5, None if seed == 0 else 1.0, 0.4, 0.45, 128, 4096)

    monkeypatch.setattr(speedrun, "run_once", interrupted)
    assert speedrun_cli.main(["--seeds", "3", "--dataset", "digits"]) == 130
    assert calls == [10_000, 0, 1]
    captured = capsys.readouterr()
    assert "interrupted after 1 of 3 seed(s): the 1 finished saved, marked \"partial\": true" in captured.err
    assert "median not reached (0 of 1 seed(s) reached it" in captured.out
    [saved] = (tmp_path / "results").rglob("speedrun_cli.smoke.json")
    m = json.loads(saved.read_text())["measurements"]
    assert m["partial"] is True and m["reached"] == "0/1" and [r["seed"] for r in m["runs"]] == [0]


def test_an_interrupt_before_any_seed_saves_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:  # noqa: ANN001
    _cli_env(monkeypatch, tmp_path)

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(speedrun, "run_once", interrupted)
    assert speedrun_cli.main(["--seeds", "2", "--dataset", "digits"]) == 130
    assert "nothing to save" in capsys.readouterr().err
    assert not list((tmp_path / "results").rglob("*.json"))


def test_the_help_lists_one_fix_a_line_and_says_what_is_timed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        speedrun_cli.main(["--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    lines = out.splitlines()
    for fix in speedrun.FIXES:
        assert any(line.split()[:1] == [fix] for line in lines), fix  # each fix starts its own line
    assert "what is timed" in out and "warm-up" in out and '"partial": true' in out
    assert "make speedrun ARGS=--help" in out


def test_python_m_runs_the_cli_without_a_runpy_warning() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "course_utils.capstone.cli", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "usage: python -m course_utils.capstone.cli" in done.stdout
    assert "RuntimeWarning" not in done.stderr and "found in sys.modules" not in done.stderr
    probe = subprocess.run([sys.executable, "-c", "import sys, course_utils; print('course_utils.capstone.cli' in "
                            "sys.modules)"], capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "False"


def test_a_summary_shows_test_accuracy_against_the_target() -> None:
    r = speedrun.RunResult("naive", 0, 0.5, 2.0, 0.52, 0.488, 48, 1536, step_s=0.017, data_share=0.2)
    assert "test 48.8%, below the 50% target" in r.summary()
    assert "reached it after 2.00 s at step 48" in r.summary() and "17.0 ms a step" in r.summary()
    quiet = r.summary(seconds=False)
    assert "reached it at step 48" in quiet and " s " not in quiet and "ms a step" not in quiet
    never = speedrun.RunResult("naive", 1, 0.5, None, 0.41, 0.51, 128, 4096)
    assert "never reached it in 128 steps" in never.summary() and "at or above the 50% target" in never.summary()


@pytest.mark.parametrize("info, no_ops", [
    (DeviceInfo("cpu", "cpu", None, 2, cpu_bf16=True), {"big_batch"}),
    (DeviceInfo("cpu", "cpu", None, 1, cpu_bf16=False), {"big_batch", "amp", "workers"}),
    (DeviceInfo("cuda", "NVIDIA A100", (8, 0), 16), set()),
    (DeviceInfo("cuda", "Tesla T4", (7, 5), 1), set()),  # 0 workers, but pinned memory on CUDA still changes the loader
    (DeviceInfo("mps", "mps", None, 1), {"workers"}),
])
def test_no_ops_follow_from_the_config_and_the_device(info: DeviceInfo, no_ops: set[str]) -> None:
    found = no_ops_here(fast_config(info), info.type)
    assert set(found) == no_ops and all(found.values())
    with pytest.raises(ValueError, match="unknown fix"):
        no_op_here("ampp", fast_config(info), info.type)


def test_a_stepper_runs_the_scripts_step(prepared: speedrun.Prepared) -> None:
    from course_utils.capstone.script import stepper

    naive, full = stepper(Stack.naive(), prepared, device="cpu"), stepper(Stack.full(), prepared, device="cpu")
    for _ in range(3):
        assert torch.isfinite(naive()) and torch.isfinite(full())
    assert not torch.is_anomaly_enabled()  # the naive step turns anomaly detection on only inside itself


def test_a_run_records_its_step_time_and_data_wait(prepared: speedrun.Prepared) -> None:
    r = speedrun.run_once(Stack.naive(), prepared, seed=0, device="cpu", target=0.3)
    assert r.step_s is not None and r.step_s > 0 and 0 < r.data_share < 1


def test_profile_steps_keeps_the_active_steps_only(prepared: speedrun.Prepared) -> None:
    from course_utils.capstone.script import profile_steps, stepper

    calls = []
    step = stepper(Stack.naive(), prepared, device="cpu")

    def counted():  # noqa: ANN202
        calls.append(1)
        return step()

    p = profile_steps(counted, wait=1, warmup=1, active=3)
    assert len(calls) == 5 and p.active == 3 and p.skipped == 2
    assert "3 profiled steps after 2 unrecorded ones" in str(p) and "aten::convolution" in p.text
    assert p.calls["aten::convolution"] > 0 and p.self_ms["aten::convolution"] >= 0
    assert p.per_step(["aten::convolution", "no::such_op"])["no::such_op"] == 0.0
    quiet = profile_steps(stepper(Stack.naive(["no_anomaly"]), prepared, device="cpu"))
    assert quiet.calls.get("aten::isnan", 0) == 0 < p.calls.get("aten::isnan", 0) + p.calls.get("aten::any", 0)
    with pytest.raises(TypeError, match="callable"):
        profile_steps(3)


def test_the_profiles_evaluation_grid_is_what_a_run_uses(prepared: speedrun.Prepared,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    assert all(p.eval_examples == speedrun.EVAL_EXAMPLES for name, p in speedrun.PROFILES.items() if name != "cifar10")
    r = speedrun.run_once(Stack.naive(), prepared, seed=0, device="cpu", target=0.9999)
    assert {e["step"] for e in r.log if e.get("split") == "val"} >= {speedrun.EVAL_EXAMPLES // 32}
    coarse = dataclasses.replace(speedrun.PROFILES["smoke"], eval_examples=4 * speedrun.EVAL_EXAMPLES)
    monkeypatch.setitem(speedrun.PROFILES, "smoke", coarse)
    r = speedrun.run_once(Stack.naive(), prepared, seed=0, device="cpu", target=0.9999)
    val_steps = [e["step"] for e in r.log if e.get("split") == "val"]
    every = coarse.eval_examples // 32
    assert val_steps[0] == every and all(s % every == 0 or s == r.steps for s in val_steps)


def test_the_cifar10_target_is_reachable_and_a_miss_is_cheap() -> None:
    import nbformat

    from course_utils.capstone import extras as capstone_extras

    p = speedrun.PROFILES["cifar10"]
    assert p.target < 0.94  # not airbench's: a 4-block net without augmentation never gets there
    evals = p.budget_examples // p.eval_examples
    assert evals * p.val_size <= 0.2 * p.budget_examples * 3  # evaluation (a forward) under a fifth of training
    assert p.train_size + p.val_size <= 50_000  # CIFAR-10's training images
    assert capstone_extras.cifar10_runs.__kwdefaults__["target"] is None  # the profile's target
    root = Path(__file__).resolve().parents[1]
    nb = nbformat.read(root / "solutions" / "19_capstone" / "19_capstone.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert f"The CIFAR-10 runs aim at {p.target * 100:.0f} % validation accuracy, not 94 %" in text


def test_the_gpu_ablation_fits_its_share_of_the_reference_window() -> None:
    from course_utils.capstone.ablation import ablation_arms
    from course_utils.capstone.ablation_table import seeds_needed

    for profile in ("cpu", "gpu"):
        fixes = speedrun.PROFILES[profile].fixes
        seeds = seeds_needed(fixes)
        assert seeds >= 6 and len(ablation_arms(fixes)) * seeds <= 144, profile  # ~0.4-0.6 s a run on an H100
    assert "inference_eval" in speedrun.PROFILES["gpu"].fixes  # Exercise 3's timing cell points at its rows

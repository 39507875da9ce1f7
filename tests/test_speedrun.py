"""The capstone's speed-run script: fixes as switches, device choices, one test evaluation, the CLI."""

from __future__ import annotations

import json

import pytest
import torch

from course_utils import speedrun
from course_utils.fixes import NAIVE_BATCH, NAIVE_LR, DeviceInfo, Stack, fast_config


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
    (["--naive", "--without", "amp"], "--naive runs no fix"),
    (["--without", "nope"], "invalid choice: 'nope'"),
    (["--dataset", "imagenet"], "--dataset must be one of"),
])
def test_bad_arguments_get_a_clear_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        speedrun.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def _cli_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: ANN001
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("COURSE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("COURSE_PROFILE", "smoke")


@pytest.mark.slow  # trains the naive script on two seeds and a warm-up run
def test_the_cli_saves_a_complete_result(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:  # noqa: ANN001
    _cli_env(monkeypatch, tmp_path)
    assert speedrun.main(["--naive", "--seeds", "2", "--dataset", "digits", "--target", "0.3"]) == 0
    [saved] = (tmp_path / "results").rglob("speedrun_cli.smoke.json")
    runs = json.loads(saved.read_text())["measurements"]["runs"]
    assert [r["seed"] for r in runs] == [0, 1] and all(r["stack"] == "naive" for r in runs)
    assert "time to 30% validation accuracy" in capsys.readouterr().out


def test_an_interrupted_run_saves_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:  # noqa: ANN001
    _cli_env(monkeypatch, tmp_path)
    calls = []
    real = speedrun.run_once

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(kwargs["seed"])
        if len(calls) == 3:  # the warm-up, seed 0, then Ctrl-C during seed 1
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(speedrun, "run_once", interrupted)
    assert speedrun.main(["--seeds", "3", "--dataset", "digits"]) == 130
    assert calls == [10_000, 0, 1]
    assert "nothing saved" in capsys.readouterr().err
    assert not list((tmp_path / "results").rglob("*.json"))


def test_a_stepper_runs_the_scripts_step(prepared: speedrun.Prepared) -> None:
    from course_utils.script import stepper

    naive, full = stepper(Stack.naive(), prepared, device="cpu"), stepper(Stack.full(), prepared, device="cpu")
    for _ in range(3):
        assert torch.isfinite(naive()) and torch.isfinite(full())
    assert not torch.is_anomaly_enabled()  # the naive step turns anomaly detection on only inside itself


def test_a_run_records_its_step_time_and_data_wait(prepared: speedrun.Prepared) -> None:
    r = speedrun.run_once(Stack.naive(), prepared, seed=0, device="cpu", target=0.3)
    assert r.step_s is not None and r.step_s > 0 and 0 < r.data_share < 1

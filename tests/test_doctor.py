"""The doctor's parts: the fixes keep the computation, the checks on probes the CPU cannot make, the report, the CLI.

The corpus (planted problems found, clean scripts left alone, bad scripts refused in one line) is
tests/test_doctor_corpus.py. Nothing here asserts a speed-up: the timed paths run on a tiny script
with a small budget and are checked for their shape (a comparison or an error per fix, verdicts the
engine's, the family level).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import course_utils as cu
from course_utils.doctor import checks, fixes, instruments, trial
from course_utils.doctor.contract import build, load_script
from course_utils.doctor.probe import probe
from course_utils.doctor.report import Report, measured_text

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = '''
import torch
from torch import nn

ANOMALY = {anomaly}


def make_training(device):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    X, y = torch.randn(256, 3, 8, 8, generator=g), torch.randint(0, 4, (256,), generator=g)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=True), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Flatten(), nn.Linear(8 * 64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=32, shuffle=True,
                                         drop_last=True)
    if ANOMALY:
        torch.autograd.set_detect_anomaly(True)

    def train_step(model, batch, optimizer, loss_fn):
        x, t = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), t)
        loss.backward()
        optimizer.step()
        return loss

    def evaluate(model):
        model.eval()
        out = (model(X[:64].to(device)).argmax(1) == y[:64].to(device)).float().mean()
        model.train()
        return float(out)

    return {{"model": model, "optimizer": optimizer, "loss_fn": nn.functional.cross_entropy, "loader": loader,
            "train_step": train_step, "evaluate": evaluate}}
'''


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_train.py"
    path.write_text(SCRIPT.format(anomaly=False))
    return path


def _run(path: Path) -> cu.doctor.Training:
    return build(load_script(path), torch.device("cpu"))


def _losses(run: cu.doctor.Training, batches: list, steps: int = 3) -> list[float]:
    return [run.run_step(run.batch_fn(b) if run.batch_fn else b).item() for b in batches[:steps]]


def test_fixes_that_keep_the_computation_give_the_same_losses(script):
    written = _run(script)
    found = probe(_run(script), steps=2)
    batches = [next(iter(written.loader)) for _ in range(3)]
    base = _losses(written, batches)
    for name in ("drop_conv_bias", "set_to_none", "fused_optimizer", "no_anomaly"):
        fixed = fixes.FIXES[name].apply(_run(script), found)
        assert _losses(fixed, batches) == pytest.approx(base, rel=1e-4, abs=1e-5), name
    dropped = fixes.FIXES["drop_conv_bias"].apply(_run(script), found)
    assert dropped.model[0].bias is None
    assert all(p is not None for g in dropped.optimizer.param_groups for p in g["params"])
    assert sum(len(g["params"]) for g in dropped.optimizer.param_groups) == len(list(dropped.model.parameters()))
    fused = fixes.FIXES["fused_optimizer"].apply(_run(script), found)
    assert fused.optimizer.defaults["fused"] is True and fused.optimizer.defaults["momentum"] == 0.9


def test_set_to_none_frees_the_gradients_and_float32_casts_the_batch(script):
    found = probe(_run(script), steps=2)
    run = fixes.FIXES["set_to_none"].apply(_run(script), found)
    run.step()
    run.optimizer.zero_grad(set_to_none=False)  # the script's own call, overridden
    assert all(p.grad is None for p in run.model.parameters())
    doubled = _run(script)
    doubled.model.double()
    cast = fixes.FIXES["float32"].apply(doubled, found)
    assert cast.next_batch()[0].dtype == torch.float32 and next(cast.model.parameters()).dtype == torch.float32


def test_anomaly_off_wins_over_the_script_and_restores_everything():
    torch.set_anomaly_enabled(True)
    try:
        before = torch.autograd.detect_anomaly, torch.autograd.set_detect_anomaly
        with instruments.anomaly_off():
            with torch.autograd.detect_anomaly():
                assert not torch.is_anomaly_enabled()
        assert torch.is_anomaly_enabled()
        assert (torch.autograd.detect_anomaly, torch.autograd.set_detect_anomaly) == before
    finally:
        torch.set_anomaly_enabled(False)


def test_the_probe_reads_what_the_script_does(script, tmp_path):
    found = probe(_run(script), steps=3)
    assert found.conv_bias_bn == ["0"] and found.conv_layers == 1
    assert set(found.zero_grad_modes) == {False} and found.optimizer["implementation"] == "for-loop"
    assert found.heavy_dtypes == {"float32": 4} and found.syncs_per_step == 0  # conv, addmm; backward: mm ×2
    assert found.eval_grad_forwards == 1 and found.eval_saved_bytes > 0
    assert not found.anomaly_forwards and found.forwards == 3  # the timed steps' forward calls
    anomalous = tmp_path / "anomalous.py"
    anomalous.write_text(SCRIPT.format(anomaly=True))
    with cu.doctor.run._torch_switches_kept():
        seen = probe(_run(anomalous), steps=3)
    assert seen.anomaly_forwards == 3 and seen.anomaly_syncs_per_step > 0 and seen.syncs_per_step == 0
    assert not torch.is_anomaly_enabled()


def _probe(**changes) -> cu.doctor.Probe:
    base = dict(name="x.py", device=torch.device("cuda"), steps=4, fetch_s=[0.001] * 4, step_s=[0.01] * 4,
                optimizer_s=[0.001] * 4, loader={"num_workers": 0, "is_dataloader": True},
                optimizer={"class": "AdamW", "implementation": "fused", "tensors": 4},
                ops={"convolution": 2, "addmm": 1}, heavy_dtypes={"float32": 3}, syncs_per_step=0.0, sync_kinds={},
                anomaly_syncs_per_step=0.0, forwards=4, anomaly_forwards=0, profiler_forwards=0,
                zero_grad_modes=[True] * 4, conv_bias_bn=[], conv_layers=2, first_layer_norm=False,
                input_shapes=[(8, 3, 32, 32)] * 4, input_dtype="torch.float32", input_mean=0.0, input_std=1.0,
                lrs=[0.1, 0.09, 0.08, 0.07], amp_dtype="bfloat16", scheduler="OneCycleLR")
    return cu.doctor.Probe(**{**base, **changes})


@pytest.mark.parametrize(("check", "changes", "fires"), [
    ("cudnn_benchmark", {}, True),
    ("cudnn_benchmark", {"cudnn_benchmark": True}, False),
    ("cudnn_benchmark", {"input_shapes": [(8, 3, 32, 32), (8, 3, 30, 30)]}, False),
    ("channels_last", {}, True),
    ("channels_last", {"channels_last": True}, False),
    ("channels_last", {"amp_dtype": None}, False),
    ("compile", {}, True),
    ("compile", {"compiled": True}, False),
    ("dtype", {}, True),
    ("dtype", {"heavy_dtypes": {"bfloat16": 3}}, False),
    ("memory_headroom", {"peak_bytes": 2 * 2**30, "total_bytes": 80 * 2**30}, True),
    ("memory_headroom", {"peak_bytes": 40 * 2**30, "total_bytes": 80 * 2**30}, False),
    ("memory_headroom", {"peak_bytes": 79 * 2**30, "total_bytes": 80 * 2**30}, True),
    ("sdpa", {"ops": {"bmm": 2, "_softmax": 1}}, True),
    ("sdpa", {"ops": {"bmm": 2, "_softmax": 1, "_scaled_dot_product_flash_attention": 1}}, False),
])
def test_the_gpu_checks_on_probes_a_cpu_cannot_make(check, changes, fires):
    c = next(c for c in checks.CHECKS if c.name == check)
    assert (c.run(_probe(**changes)) is not None) == fires
    assert c.run(_probe(device=torch.device("cpu"), **changes)) is None or "cpu" in c.devices


def test_a_finding_names_its_evidence_lesson_and_fix():
    finding = checks.dtype(_probe(heavy_dtypes={"float64": 2, "float32": 1}))
    assert finding.check == "dtype" and finding.lesson == "04" and finding.fix == "float32"
    assert "2 of 3" in finding.evidence and finding.value == pytest.approx(2 / 3)
    assert checks.fix_of(checks.lr_schedule(_probe(lrs=[0.1] * 4, scheduler=None))) is None  # never applied


def _comparison(verdict: str, speedup: float) -> SimpleNamespace:
    return SimpleNamespace(verdict=verdict, speedup=speedup, ci=(speedup * 0.9, speedup * 1.1), aa_speedup=1.0,
                           level=0.975, median_s=(0.01, 0.01 / speedup), to_dict=lambda: {"verdict": verdict})


def _finding(name: str, fix: str | None, comparison=None, convergence=False) -> cu.doctor.Finding:
    return cu.doctor.Finding(name, "p", "e", 1.0, "01", "c", fix, convergence, comparison)


def test_the_report_ranks_by_measured_gain_and_recommends_only_faster(tmp_path):
    findings = [_finding("lr_schedule", None, convergence=True),
                _finding("a", "no_anomaly", _comparison("slower", 0.8)),
                _finding("b", "set_to_none", _comparison("faster", 1.3)),
                _finding("c", "workers", _comparison("not resolvable on this hardware", 1.05)),
                _finding("d", "inference_eval", _comparison("faster", 2.0))]
    report = Report("my_train.py", "cpu", "smoke", findings, ["x"], {"step_ms": 3.0},
                    trial.Stacked(["set_to_none"], _comparison("faster", 1.3)), env=cu.env.environment_record("cpu"))
    assert [f.check for f in report.ranked()] == ["d", "b", "c", "a", "lr_schedule"]
    assert [f.check for f in report.recommended()] == ["d", "b"]
    texts = {f.check: measured_text(f) for f in findings}
    assert texts["a"].endswith("not recommended") and "slower" in texts["a"]
    assert texts["c"].endswith("not recommended") and texts["b"].endswith("recommended")
    assert texts["d"].startswith("the evaluation") and "read lesson 01" in texts["lr_schedule"]
    text = str(report)
    assert "97.50%" in text and "at most 5%" in text
    paths = report.save(tmp_path)
    assert [p.name for p in paths] == ["doctor.my_train.smoke.json", "doctor.my_train.smoke.md"]
    saved = json.loads(paths[0].read_text())
    assert saved["kind"] == "doctor" and [f["check"] for f in saved["findings"]] == ["d", "b", "c", "a", "lr_schedule"]
    assert "| 1 | d |" in paths[1].read_text()


def test_the_doctor_times_each_fix_and_stacks_the_faster_ones(script, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setattr(cu.doctor.probe, "fast_dtype", lambda device: None)  # this CPU's bf16 left out: fewer arms
    report = cu.doctor(script, device="cpu", budget=0.3, progress=False, root=tmp_path)
    found = {f.check: f for f in report.findings}
    assert set(found) == {"bias_before_bn", "zero_grad", "eval_autograd", "lr_schedule"}, str(report)
    timed = [f for f in report.findings if checks.fix_of(f) is not None]
    assert len(timed) == 3 and all(f.comparison is not None or f.error for f in timed)
    levels = [f.comparison.level for f in timed if f.comparison is not None]
    assert levels == [pytest.approx(1 - 0.05 / 4)] * len(levels)  # Bonferroni: 3 fixes and the stacked step
    faster = [f.fix for f in timed if f.comparison is not None and f.comparison.verdict == "faster"
              and f.fix != "inference_eval"]
    assert report.stacked.fixes == faster
    assert (tmp_path / cu.hardware.machine_id(report.env) / "doctor.tiny_train.smoke.json").exists()
    assert not torch.is_anomaly_enabled() and torch.is_grad_enabled()


def test_cu_doctor_is_the_namespace_and_the_function():
    assert callable(cu.doctor) and cu.doctor.diagnose is cu.doctor.run.diagnose
    assert isinstance(cu.doctor, type(json)) and cu.doctor.EXAMPLES["naive_train"].is_file()


def test_the_cli_explains_the_contract_and_refuses_bad_input(tmp_path):
    run = [sys.executable, "-m", "course_utils.doctor"]
    shown = subprocess.run([*run, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert shown.returncode == 0 and "make_training(device)" in shown.stdout
    bad = subprocess.run([*run, str(tmp_path / "x.py"), "--budget", "0"], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "--budget" in bad.stderr


def test_the_naive_example_is_found_wanting_by_the_cli_in_the_smoke_profile(tmp_path):
    """``make doctor`` on a fresh clone: the capstone's naive script, findings only (timed in .ci/run)."""
    out = subprocess.run([sys.executable, "-m", "course_utils.doctor", str(cu.doctor.EXAMPLES["naive_train"]),
                          "--no-measure", "--profile", "smoke", "--out", str(tmp_path), "--threads", "1"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    # the deterministic findings (data_wait depends on this machine's timing: the corpus plants a large one)
    for check in ("host_syncs", "debug_modes", "bias_before_bn", "eval_autograd", "lr_schedule"):
        assert check in out.stdout, (check, out.stdout)
    assert list(tmp_path.glob("*/doctor.naive_train.smoke.md"))


def test_on_a_cpu_only_float64_is_a_dtype_finding():
    """bf16's gain on a CPU depends on the chip (lesson 04): float32 there is no finding, bf16 instructions or not."""
    assert checks.dtype(_probe(device=torch.device("cpu"), amp_dtype="bfloat16")) is None
    assert checks.dtype(_probe(device=torch.device("cpu"), heavy_dtypes={"float64": 3})).fix == "float32"
    assert checks.dtype(_probe(device=torch.device("mps"), amp_dtype="float16")).fix == "autocast"


def test_no_dataloader_worker_outlives_the_doctor(monkeypatch):
    """The workers fix starts worker processes for its arm; they stop with the arm, not at some garbage collection."""
    import multiprocessing

    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    before = set(multiprocessing.active_children())
    report = cu.doctor(ROOT / "tests" / "doctor_corpus" / "photo_patches_convnet.py", device="cpu", save=False,
                       progress=False, budget=0.3, checks=[c for c in checks.CHECKS if c.name == "data_wait"])
    finding = report.findings[0] if report.findings else None
    assert finding is None or finding.comparison is not None or finding.error, str(report)
    assert set(multiprocessing.active_children()) <= before, "DataLoader workers left running after the doctor"


def test_versus_doctor_lines_the_findings_up_with_the_ablation():
    quick = Report("naive_train.py", "cpu", "smoke", [_finding("debug_modes", "no_anomaly"),
                                                      _finding("host_syncs", None)], ["x"], {})
    timed = Report("naive_train.py", "cpu", "smoke",
                   [_finding("debug_modes", "no_anomaly", _comparison("faster", 1.6))], ["x"], {})
    ablation = SimpleNamespace(no_ops={}, rows=lambda: [("alone", "no_anomaly", _comparison("faster", 1.4)),
                                                        ("removed", "no_anomaly", _comparison("faster", 1.5)),
                                                        ("alone", "amp", _comparison("slower", 0.9))])
    versus = cu.capstone.versus_doctor(quick, ablation, timings=timed)
    rows = {r["fix"]: r for r in versus.rows}
    assert versus.both_faster() == ["no_anomaly"] and rows["no_item_log"]["found"]
    assert rows["big_batch"]["ablation"] == "no-op here"  # a CPU's batch is the naive one, ablated or not
    assert "amp" not in versus.applicable and "big_batch" not in versus.missed
    assert quick.findings[0].comparison is None  # the quick report itself is left as it was

"""The doctor (course_utils.doctor) on a corpus of learners' training scripts, with known problems.

``tests/doctor_corpus/`` holds small, realistic scripts that follow the doctor's contract: three clean ones
(written the way the course teaches) and scripts with one or two problems planted, each one a problem a
check of the doctor names. :data:`PLANTED` is the answer key. The doctor (``measure=False``: the findings,
no timing of fixes) must find at least 90 % of the planted problems, nothing on a clean script and nothing
a script does not have. ``tests/doctor_corpus/bad/`` holds scripts the doctor cannot diagnose: each must be
a :class:`~course_utils.doctor.DoctorError` with a one-line message that names the script and says what
is wrong.

No finding depends on the CPU: the doctor suggests a faster dtype than float32 only on an accelerator
(on a CPU, bf16's gain depends on the chip, lesson 04), so float64 is the CPU's one ``dtype`` finding.

Two checks read the clock (``data_wait``: the batch fetch's share of the step; ``optimizer``: the optimizer
step's share): the corpus runs on one torch thread (on a busy machine two threads wait for each other and
stretch the step many times over, the loader's single-threaded work far less), and a script whose findings
are not the expected ones is diagnosed again, up to three times (tests/clock.py); the table says how many
diagnoses each script took.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import course_utils as cu

from clock import retried

# What the corpus's scripts warn about is part of their problems (anomaly detection on, float() of a loss).
pytestmark = [pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled:UserWarning"),
              pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True:UserWarning")]

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "doctor_corpus"
BAD = CORPUS / "bad"

#: script -> the checks its planted problems must trigger (an empty set: a clean script).
PLANTED: dict[str, set[str]] = {
    "clean_mlp.py": set(),
    "clean_convnet.py": set(),
    "clean_transformer_like.py": set(),
    "photo_patches_convnet.py": {"data_wait"},  # Pillow decode + augmentation per item, num_workers=0
    "keyword_spotting.py": {"data_wait"},  # numpy log-mel spectrogram + augmentation per item
    "credit_scoring_mlp.py": {"dtype"},  # model and data in float64
    "deep_residual_mlp.py": {"optimizer"},  # 84 small parameter tensors, Adam(foreach=False)
    "churn_mlp.py": {"host_syncs"},  # loss.item() and a running accuracy .item() every step
    "texture_convnet.py": {"zero_grad"},  # zero_grad(set_to_none=False)
    "sensor_attention.py": {"debug_modes"},  # set_detect_anomaly(True) in make_training
    "ecg_classifier.py": {"debug_modes"},  # `with torch.autograd.detect_anomaly():` in train_step
    "satellite_tiles_convnet.py": {"debug_modes"},  # a profiler started in make_training, stepped every step
    "shapes_convnet.py": {"bias_before_bn"},  # Conv2d(bias=True) -> BatchNorm2d, in an nn.Sequential
    "wine_quality_mlp.py": {"eval_autograd"},  # evaluate() without no_grad / inference_mode
    "meter_digits_convnet.py": {"input_stats"},  # raw 0-255 grey levels into a convolution
    "loan_default_mlp.py": {"input_stats"},  # raw tabular fields (incomes in the tens of thousands)
    "gesture_transformer.py": {"lr_schedule"},  # AdamW at a constant learning rate
    "patch_transformer.py": {"dtype", "eval_autograd"},
    "small_resnet.py": {"bias_before_bn", "host_syncs"},  # ResNet blocks: conv1 -> bn1 in forward(); float(loss)
    "spectra_mlp.py": {"lr_schedule", "zero_grad"},
}
#: bad script -> words its DoctorError message must contain (besides the script's file name).
BAD_SCRIPTS: dict[str, tuple[str, ...]] = {
    "no_make_training.py": ("make_training",),
    "make_training_raises.py": ("make_training", "KeyError", "learning_rate"),
    "loader_raises.py": ("RuntimeError", "shape"),
    "model_on_meta.py": ("meta",),
    "missing_loss_fn.py": ("loss_fn",),
    "syntax_error.py": ("SyntaxError",),
}
#: A script that does not parse (written to a temporary folder: a file of it in the checkout would fail `make lint`).
SYNTAX_ERROR = '''"""An MLP on 10 features; a bracket is left open."""

import torch
from torch import nn


def make_training(device: torch.device) -> dict:
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2).to(device)
    return {"model": model}
'''
RECALL = 0.90
#: Scripts whose step computes in float64 (their dtype finding is the planted one).
FLOAT64 = {"credit_scoring_mlp.py", "patch_transformer.py"}
#: Scripts that turn a debugging mode on (anomaly detection, a profiler) that must not outlive their diagnosis.
DEBUG_MODES = sorted(s for s, p in PLANTED.items() if "debug_modes" in p)


def bad_script(name: str, tmp_path: Path) -> Path:
    if name == "syntax_error.py":
        path = tmp_path / name
        path.write_text(SYNTAX_ERROR)
        return path
    return BAD / name


def expected(script: str) -> set[str]:
    """The planted checks: what the doctor must find, and all it may find."""
    return PLANTED[script]


@contextlib.contextmanager
def no_profiler_left():
    """Stop a profiler that a script started and the doctor left recording.

    A torch profiler still recording when the interpreter exits crashes it (a segmentation fault, exit status
    139: the whole pytest run fails). The doctor should stop it (tested below); this keeps a failure a failure.
    """
    try:
        yield
    finally:
        if torch.autograd._profiler_enabled() or torch.autograd.profiler._is_profiler_enabled:
            torch.autograd._disable_profiler()
            torch.autograd.profiler._is_profiler_enabled = False


@contextlib.contextmanager
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def diagnose(path: Path) -> cu.doctor.Report:
    return cu.doctor(path, device="cpu", measure=False, save=False, progress=False)


def checks_of(report: cu.doctor.Report) -> set[str]:
    return {f.check for f in report.findings}


def table(rows: list[tuple[str, set[str], set[str], float, int]]) -> str:
    """The corpus's results, one line per script: planted, found, missed, extra, seconds, diagnoses run."""
    def names(s: set[str]) -> str:
        return ", ".join(sorted(s)) or "-"

    lines = [f"{'script':27s} {'planted':27s} {'found':27s} {'missed':14s} {'extra':14s} {'s':>4s} tries"]
    for script, planted, found, seconds, tries in rows:
        lines.append(f"{script:27s} {names(planted):27s} {names(found):27s} {names(planted - found):14s} "
                     f"{names(found - expected(script)):14s} {seconds:4.1f} {tries}")
    return "\n".join(lines)


def test_the_answer_key_covers_the_corpus_and_every_check():
    on_disk = {p.name for p in CORPUS.glob("*.py")}
    assert on_disk == set(PLANTED), f"scripts without an entry: {on_disk - set(PLANTED)}; " \
                                    f"entries without a script: {set(PLANTED) - on_disk}"
    assert {p.name for p in BAD.glob("*.py")} | {"syntax_error.py"} == set(BAD_SCRIPTS)
    planted = set().union(*PLANTED.values())
    assert planted == {"data_wait", "dtype", "optimizer", "host_syncs", "zero_grad", "debug_modes",
                       "bias_before_bn", "eval_autograd", "input_stats", "lr_schedule"}
    assert planted <= {c.name for c in cu.doctor.CHECKS}, "a planted problem no check of the doctor names"


@pytest.mark.clock  # data_wait and optimizer compare measured times: one thread, a script retried
def test_the_doctor_finds_the_planted_problems_and_nothing_else():
    rows, wrong_dtype, started = [], [], time.perf_counter()
    with no_profiler_left(), one_thread():
        for script, planted in PLANTED.items():
            t, tries = time.perf_counter(), []
            report = retried(lambda _, script=script, tries=tries: tries.append(1) or diagnose(CORPUS / script),
                             lambda r, script=script: checks_of(r) == expected(script))
            rows.append((script, planted, checks_of(report), time.perf_counter() - t, len(tries)))
            wrong_dtype += [f"{script}: {f.evidence}" for f in report.findings
                            if f.check == "dtype" and "float64" not in f.evidence]
    elapsed = time.perf_counter() - started
    total = sum(len(p) for _, p, _, _, _ in rows)
    hit = sum(len(p & f) for _, p, f, _, _ in rows)
    recall = hit / total
    text = (f"{table(rows)}\nrecall {hit}/{total} = {recall:.2f} (at least {RECALL:.2f}); "
            f"{len(rows)} scripts in {elapsed:.1f} s, {sum(r[4] for r in rows)} diagnoses")
    print("\n" + text)
    assert recall >= RECALL, f"the doctor missed planted problems:\n{text}"
    clean_hits = [s for s, p, f, _, _ in rows if not p and f]
    assert not clean_hits, f"findings on clean scripts {clean_hits}:\n{text}"
    extra = [s for s, p, f, _, _ in rows if f - expected(s)]
    assert not extra, f"findings a script does not have, on {extra}:\n{text}"
    assert not wrong_dtype, "dtype findings that name the wrong precision:\n" + "\n".join(wrong_dtype)


@pytest.mark.parametrize("name", sorted(BAD_SCRIPTS))
def test_a_script_the_doctor_cannot_diagnose_is_one_line_that_says_why(name, tmp_path):
    path = bad_script(name, tmp_path)
    with pytest.raises(cu.doctor.DoctorError) as caught:
        diagnose(path)
    message = str(caught.value)
    assert "\n" not in message.strip(), f"not one line: {message!r}"
    assert name in message, f"the message does not name the script: {message!r}"
    missing = [w for w in BAD_SCRIPTS[name] if w not in message]
    assert not missing, f"the message lacks {missing}: {message!r}"
    assert "Traceback" not in message


@pytest.mark.parametrize("script", DEBUG_MODES)
def test_a_debugging_mode_a_script_turns_on_is_off_after_its_diagnosis(script):
    """Anomaly detection or a profiler left on would slow (and be found in) every script diagnosed after it."""
    with no_profiler_left():
        report = diagnose(CORPUS / script)
        assert "debug_modes" in checks_of(report)
        assert not torch.is_anomaly_enabled(), "anomaly detection is still on after the diagnosis"
        assert not torch.autograd._profiler_enabled(), "the script's profiler is still recording after the diagnosis"


def test_the_doctor_writes_nothing_beside_the_script(tmp_path):
    folder = tmp_path / "learner"
    folder.mkdir()
    shutil.copy(CORPUS / "clean_mlp.py", folder / "train.py")
    pristine = tmp_path / "train.py.orig"
    shutil.copy(CORPUS / "clean_mlp.py", pristine)
    before = sorted(p.name for p in folder.iterdir())
    diagnose(folder / "train.py")
    after = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    assert after == before, f"the doctor wrote beside the script: {sorted(set(after) - set(before))}"
    assert filecmp.cmp(folder / "train.py", pristine, shallow=False), "the doctor changed the script"


def test_the_command_line_says_what_is_wrong_in_one_line_and_exits_2():
    script = BAD / "no_make_training.py"
    env = {**os.environ, "COURSE_PROFILE": "smoke"}
    done = subprocess.run([sys.executable, "-m", "course_utils.doctor", str(script)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, f"exit status {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"stderr is not one line:\n{done.stderr}"
    assert "Traceback" not in done.stderr
    assert "no_make_training.py" in lines[0] and "make_training" in lines[0]

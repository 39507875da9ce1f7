"""The capstone's GPU-only runs: they say why they do not run, and their parts work where they can be checked.

CIFAR-10 runs only on a CUDA GPU in the gpu profile: here its data path (3-channel PNG files
through the naive script and the stack) is checked on small files in CIFAR-10's real format. DDP
scaling runs only with more than one GPU: here the same rank script runs under a real
``torchrun`` with two gloo processes on the CPU.
"""

from __future__ import annotations

import pickle
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import course_utils as cu
from course_utils.capstone import extras as capstone_extras
from course_utils.capstone import speedrun
from course_utils.capstone.fixes import Stack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/ (make_reference's fallback check)
from tools.reference_lesson import FALLBACK_MARK, fell_back  # noqa: E402


def _write_cifar10(root, n=300):
    """CIFAR-10's on-disk format (pickled dicts of uint8 rows), random pixels, labels by brightness."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        labels = rng.integers(0, 10, size=n)
        data = (rng.integers(0, 64, size=(n, 3072)) + labels[:, None] * 19).astype(np.uint8)
        with open(folder / name, "wb") as f:
            pickle.dump({"batch_label": name, "labels": labels.tolist(), "data": data,
                         "filenames": [f"{name}_{i}.png" for i in range(n)]}, f)
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump({"label_names": list(cu.data.cifar10.CIFAR10_CLASSES), "num_cases_per_batch": n}, f)


@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_DATA", str(tmp_path))
    monkeypatch.delenv("COURSE_DATASET", raising=False)
    return tmp_path


def test_the_gpu_runs_say_why_they_do_not_run_here(capsys) -> None:
    env = SimpleNamespace(device=torch.device("cpu"), profile="smoke", record={})
    assert capstone_extras.cifar10_runs(env) is None
    assert capstone_extras.ddp_scaling(env) is None
    out = capsys.readouterr().out
    assert "CIFAR-10: not run" in out and "smoke profile on a cpu" in out and "DDP: not run" in out


#: An Env that claims a CUDA GPU in the gpu profile (the only case in which cifar10_runs tries CIFAR-10).
GPU_ENV = SimpleNamespace(device=torch.device("cuda"), profile="gpu", record={"gpu_name": "claimed (test)"})


class _Prepared(Exception):
    """Raised by the test's stand-in for speedrun.prepare: the CIFAR-10 part went on to prepare."""


@pytest.fixture()
def no_prepare(monkeypatch):
    def prepare(*args, **kwargs):
        raise _Prepared(args)

    monkeypatch.setattr(speedrun, "prepare", prepare)


def _refuse_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the network was touched")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def _no_reference_lost(out: str, tmp_path) -> None:
    """Nothing printed that make_reference would read as the digits fallback (the lesson would be no reference)."""
    assert FALLBACK_MARK not in out
    executed = tmp_path / "19_capstone.ipynb"
    executed.write_text(out)
    assert not fell_back(executed)


def test_cifar10_offline_on_a_gpu_is_one_plain_line(data_dir, monkeypatch, capsys, no_prepare) -> None:
    _refuse_network(monkeypatch)
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    start = time.perf_counter()
    assert capstone_extras.cifar10_runs(GPU_ENV) is None
    assert time.perf_counter() - start < 5
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("CIFAR-10: not run") and "COURSE_OFFLINE is set" in lines[0]
    _no_reference_lost(captured.out + captured.err, data_dir)


def test_cifar10_unreachable_on_a_gpu_gives_up_within_the_timeout(data_dir, monkeypatch, capsys,
                                                                  no_prepare) -> None:
    released = threading.Event()

    def hangs(*args, **kwargs):  # a silently dropping network, DNS included
        released.wait(30)
        raise TimeoutError("timed out (test)")

    def no_download(*args, **kwargs):
        raise AssertionError("no download may start when the host did not answer")

    monkeypatch.delenv("COURSE_OFFLINE", raising=False)
    monkeypatch.setattr(cu.data.cifar10, "MIRROR_TIMEOUT_S", 0.3)
    monkeypatch.setattr(socket, "create_connection", hangs)
    monkeypatch.setattr(urllib.request, "urlopen", no_download)
    import torchvision.datasets  # noqa: F401  (imported before the clock starts: it takes seconds the first time)

    start = time.perf_counter()
    try:
        assert capstone_extras.cifar10_runs(GPU_ENV) is None
    finally:
        released.set()
    assert time.perf_counter() - start < 0.3 + 1.0 + 1.0
    captured = capsys.readouterr()
    assert "CIFAR-10: not run" in captured.out and "cannot reach" in captured.out
    _no_reference_lost(captured.out + captured.err, data_dir)


def test_cifar10_failed_download_on_a_gpu_is_one_plain_line(data_dir, monkeypatch, capsys, no_prepare) -> None:
    def broken(*args, **kwargs):
        raise OSError("connection reset by peer (test)")

    monkeypatch.delenv("COURSE_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "create_connection", lambda *args, **kwargs: SimpleNamespace(close=lambda: None))
    monkeypatch.setattr(urllib.request, "urlopen", broken)
    assert capstone_extras.cifar10_runs(GPU_ENV) is None
    captured = capsys.readouterr()
    assert "CIFAR-10: not run" in captured.out and "connection reset by peer" in captured.out
    _no_reference_lost(captured.out + captured.err, data_dir)


def test_cifar10_on_disk_goes_on_to_prepare_offline(data_dir, monkeypatch, no_prepare) -> None:
    _refuse_network(monkeypatch)
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    _write_cifar10(data_dir, n=2)
    with pytest.raises(_Prepared, match="cifar10"):  # the files are there: no reason to skip
        capstone_extras.cifar10_runs(GPU_ENV)


@pytest.mark.slow  # trains the naive script and the stack
def test_cifar10_colour_images_go_through_both_scripts(data_dir) -> None:
    _write_cifar10(data_dir)
    prepared = speedrun.prepare("cifar10", "smoke", verbose=False)
    assert prepared.data.name == "cifar10" and prepared.data.input_shape == (3, 32, 32)
    for stack in (Stack.naive(), Stack.full()):
        r = speedrun.run_once(stack, prepared, seed=0, device="cpu", target=0.05)
        assert r.time_to_target is not None and [e["event"] for e in r.log][-2:] == ["eval", "end"]


def test_a_fallback_smaller_than_the_profile_still_trains(data_dir, monkeypatch) -> None:
    monkeypatch.setenv("COURSE_DATASET", "digits")  # CIFAR-10's sizes, but only 1,797 digits
    with pytest.warns(cu.data.datasets.DatasetFallbackWarning):
        prepared = speedrun.prepare("cifar10", "cifar10", verbose=False)
    assert prepared.data.name == "digits" and len(prepared.data.X_train) >= 4 * len(prepared.X_val) > 0


@pytest.mark.slow  # a real torchrun with two ranks
def test_ddp_scaling_runs_real_ranks(data_dir) -> None:
    eff = capstone_extras.ddp_scaling(nprocs=2, device_type="cpu", rounds=1, steps=3, dataset="digits",
                                      profile="smoke", timeout=240)
    assert eff is not None and eff.value > 0 and eff.low == eff.high == eff.value
    assert "min-max over 1 alternating rounds" in eff.interval


def test_airbench_is_quoted_with_how_its_method_differs() -> None:
    text = capstone_extras.METHOD_DIFFERENCES
    for needed in ("fixed 8 epochs", "mean test accuracy of 200 runs", "test set", "leaves out loading the data",
                   "held out", "test set once", "median over paired seeds", "stricter"):
        assert needed in text, needed

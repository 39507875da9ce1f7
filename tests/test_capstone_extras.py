"""The capstone's GPU-only runs: they say why they do not run, and their parts work where they can be checked.

CIFAR-10 runs only on a CUDA GPU in the gpu profile: here its data path (3-channel PNG files
through the naive script and the stack) is checked on small files in CIFAR-10's real format. DDP
scaling runs only with more than one GPU: here the same rank script runs under a real
``torchrun`` with two gloo processes on the CPU.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import course_utils as cu
from course_utils import capstone_extras, speedrun
from course_utils.fixes import Stack


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
        pickle.dump({"label_names": list(cu.data.CIFAR10_CLASSES), "num_cases_per_batch": n}, f)


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
    with pytest.warns(cu.data.DatasetFallbackWarning):
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

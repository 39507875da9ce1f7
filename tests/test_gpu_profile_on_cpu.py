"""Lesson 10 in the gpu profile where its ranks run on the CPU: the path of every single-GPU machine.

With fewer than two GPUs (``CONFIG["cuda"]`` False) lesson 10's ranks run on the CPU, one thread
each, in every profile: the gpu profile's H100/H200 reference run and Colab's T4 take that path.
``COURSE_PROFILE=gpu`` on this CPU-only machine runs the very same code. The sizes of the ranks' work
must follow where it runs (the cpu profile's on the CPU) and the torchrun limit must follow from the
work: at the gpu profile's GPU sizes the scaling timing ran past the launch's fixed 90 s and the
lesson stopped. Marked ``gpu_profile``: ``.ci/run`` runs it, ``make test`` does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tools.run_notebooks import execute_notebook

# executes a lesson that launches torchrun six times
pytestmark = [pytest.mark.slow, pytest.mark.notebooks, pytest.mark.gpu_profile]

ROOT = Path(__file__).resolve().parents[1]
SLUG = "10_distributed_data_parallel"
LESSON = ROOT / "solutions" / SLUG / f"{SLUG}.ipynb"
CELL_TIMEOUT_S = 600  # stops a hung cell only: the longest cell takes ~15 s on 2 busy cores
#: Stops a hung run only (~50 s on 2 busy cores; every torchrun launch has its own limit inside).
HANG_S = 900


def test_lesson_10_completes_in_the_gpu_profile_with_its_ranks_on_the_cpu(tmp_path, monkeypatch):
    results = tmp_path / "results"
    monkeypatch.setenv("COURSE_PROFILE", "gpu")
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(results))
    run = execute_notebook(LESSON, tmp_path / "build", timeout=CELL_TIMEOUT_S)
    assert not run.error, f"{SLUG} failed in the gpu profile after {run.seconds:.0f} s:\n{run.error}"
    assert run.seconds < HANG_S, f"{SLUG} took {run.seconds:.0f} s in the gpu profile"
    saved = list(results.glob(f"*/{SLUG}.gpu.json"))
    assert len(saved) == 1, f"the lesson saved no gpu-profile result under {results}: {sorted(results.rglob('*'))}"
    record = json.loads(saved[0].read_text())
    sizes = record["measurements"]["sizes"]
    assert record["profile"] == "gpu"
    assert sizes["cuda"] == (torch.cuda.device_count() >= sizes["world"]), sizes  # the ranks' path, as on 1 GPU
    print(f"\n{SLUG}, gpu profile, ranks on {'GPUs' if sizes['cuda'] else 'the CPU'}: {run.seconds:.0f} s wall "
          f"(scaling batch {sizes['scale_batch']}, width {sizes['scale_hidden']}, {sizes['rounds']} rounds)")

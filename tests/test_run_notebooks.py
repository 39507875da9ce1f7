"""tools/run_notebooks.py: the notebooks that `make run` executes keep their figures.

The kernel must draw with its default, the inline backend: a non-interactive backend inherited
from the caller (``MPLBACKEND=Agg``, which the root conftest.py sets for this very process) makes
``plt.show()`` embed nothing, and the executed lessons would carry no figure at all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.run_notebooks import execute_notebook

pytestmark = [pytest.mark.slow, pytest.mark.notebooks]  # executes notebooks in a kernel: not in `make check`

ROOT = Path(__file__).resolve().parents[1]
#: The cheapest lesson that draws a figure in the smoke profile (about 6 s, no dataset).
LESSON = ROOT / "solutions" / "00_measuring" / "00_measuring.ipynb"


def test_an_executed_lesson_keeps_its_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "results"))
    assert os.environ.get("MPLBACKEND") == "Agg"  # what the kernel must not inherit (root conftest.py)
    run = execute_notebook(LESSON, tmp_path / "build", timeout=120)
    assert not run.error, run.error
    figures = [o for c in run.nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
               if "image/png" in o.get("data", {})]
    assert figures, f"{LESSON.parent.name} ran in {run.seconds:.0f} s but its executed notebook has no image/png output"

"""Each solution's gpu sizing comment ends with the estimator's total for that lesson (tools/estimate_gpu.py)."""

import json
import re
from pathlib import Path

import pytest

from tools import estimate_gpu as eg

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted(ROOT.glob("solutions/[0-9][0-9]_*/[0-9][0-9]_*.ipynb"))
ESTIMATE = re.compile(r"# Estimate \(tools/estimate_gpu\.py\): about (\d+) s on an H100/H200\.")
TOLERANCE_S = 2  # the estimator's figures move a little with its constants; a comment this close still holds


@pytest.fixture(scope="module")
def estimates() -> dict[str, float]:
    """Each lesson's estimated seconds on an H100/H200 at the gpu budget."""
    return eg.lesson_seconds()


def estimate_lines(path: Path) -> list[str]:
    """The sizing lines in a notebook's code cells."""
    cells = json.loads(path.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return [m.group(1) for m in ESTIMATE.finditer(code)]


def test_every_lesson_is_checked() -> None:
    assert len(SOLUTIONS) == 20, [p.name for p in SOLUTIONS]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_the_sizing_comment_states_the_estimator_s_total(path: Path, estimates: dict[str, float]) -> None:
    found = estimate_lines(path)
    assert len(found) == 1, f"{path.name}: {len(found)} estimate lines, expected exactly one ({found})"
    said, want = int(found[0]), round(estimates[path.parent.name])
    assert abs(said - want) <= TOLERANCE_S, (
        f"{path.name} says about {said} s on an H100/H200; tools/estimate_gpu.py gives {want} s: update the comment")

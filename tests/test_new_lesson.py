"""tools/new_lesson.py writes a skeleton with the anatomy tests/test_structure.py pins, and overwrites nothing."""

import json
from pathlib import Path

import nbformat
import pytest

from tests.test_structure import anatomy_problems, nbg
from tools import lesson_facts as lf
from tools import new_lesson
from tools.notebook_builder import setup_source

SLUG, TITLE = "98_new_trick", "A new trick"


@pytest.fixture
def skeleton(tmp_path: Path) -> Path:
    """A skeleton written into a course root of its own."""
    assert new_lesson.main([SLUG, TITLE, "--root", str(tmp_path)]) == 0
    return tmp_path / "solutions" / SLUG / f"{SLUG}.ipynb"


def test_the_skeleton_passes_the_structure_checks(skeleton: Path) -> None:
    nb = nbformat.read(skeleton, as_version=4)
    nbformat.validate(nb)
    assert anatomy_problems(nb, SLUG) == []  # every check: none needs a written lesson to pass
    assert nb.cells[0].source.startswith(f"# 98 · {TITLE}\n")
    assert [c.id for c in nb.cells] == [f"98-{i:03d}" for i in range(len(nb.cells))]


def test_the_skeleton_s_setup_cell_is_the_locked_one(skeleton: Path) -> None:
    """The setup cell is the builder's, byte for byte, as every lesson's is (tests/test_structure.py)."""
    setup = next(c for c in nbformat.read(skeleton, as_version=4).cells if nbg(c).get("grade_id") == "setup")
    assert setup.source == setup_source(cpu_threads=1) and nbg(setup)["locked"]


def test_the_skeleton_s_facts_are_there_to_fill(skeleton: Path) -> None:
    """Its course metadata has every fact; the facts check names exactly the ones left to fill."""
    nb = json.loads(skeleton.read_text(encoding="utf-8"))
    assert set(nb["metadata"]["course"]) == set(lf.FACTS) and nb["metadata"]["course"]["status"] == "planned"
    problems = lf.problems(nb, SLUG)
    expected = ("fact 'claim' is empty", "fact 'summary' is empty", "dataset '' is not one of",
                "the skeleton's assumed ones")
    assert len(problems) == len(expected) and all(any(e in p for p in problems) for e in expected), problems
    assert "TODO" in skeleton.read_text()


@pytest.mark.parametrize(("slug", "title", "expected"), [
    ("5_new_trick", TITLE, "is not a lesson slug"),
    ("98-new-trick", TITLE, "is not a lesson slug"),
    ("98_New_Trick", TITLE, "is not a lesson slug"),
    ("98_", TITLE, "is not a lesson slug"),
    ("98_other", "  ", "the title is empty"),
    (SLUG, TITLE, f"solutions/{SLUG} already exists"),
    ("98_another_trick", TITLE, f"solutions/{SLUG} already exists: lesson 98 is taken"),
])
def test_a_bad_slug_or_a_taken_lesson_is_refused_in_one_line(skeleton: Path, capsys: pytest.CaptureFixture[str],
                                                             slug: str, title: str, expected: str) -> None:
    before = skeleton.read_bytes()
    capsys.readouterr()
    root = skeleton.parents[2]
    assert new_lesson.main([slug, title, "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1, err
    assert skeleton.read_bytes() == before
    assert sorted(p.name for p in (root / "solutions").iterdir()) == [SLUG]


def test_the_repository_s_lessons_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert new_lesson.main(["04_mixed_precision", "Mixed precision"]) == 1
    assert "solutions/04_mixed_precision already exists" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.notebooks
def test_the_skeleton_runs(skeleton: Path, tmp_path: Path) -> None:
    """The skeleton executes clean in the smoke profile (its stand-in trick is timed and saved)."""
    from tools.run_notebooks import execute_notebook

    run = execute_notebook(skeleton, tmp_path / "run", 300,
                           env={"COURSE_PROFILE": "smoke", "COURSE_RESULTS_DIR": str(tmp_path / "results")})
    assert not run.error, run.error
    assert "visible tests passed" in run.stdout and f"{SLUG}.smoke.json" in run.stdout, run.stdout[-2000:]

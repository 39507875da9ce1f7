"""Grading at scale ends with the same gradebook: JOBS=2 against JOBS=1, and a real SLURM array.

A temporary course (the real Makefile and tools, the fixture) with six hand-ins — full marks,
blank, one exercise wrong, a syntax error, a late one and a visible-test-only answer — is graded
serially, then with two workers, and (where a local SLURM can run: root, slurm-wlm, munge) as a
job array; each gradebook is read back as a canonical table and compared whole. The array is then
run again after one run was lost (a preempted task): only that one runs, and the gradebook is the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import nbformat
import pytest
from slurm_local import local_slurm, slurm_available
from test_grading_safety import FIXTURE, make, make_course

from tools import sandbox

pytestmark = [pytest.mark.slow, pytest.mark.notebooks, pytest.mark.grading,
              pytest.mark.skipif(sandbox.find() is None, reason=sandbox.WHY_NOT)]


def hand_ins(course: Path) -> None:
    """Six submissions of the fixture in submitted/, each with a fixed timestamp."""
    sol = nbformat.read(course / "solutions" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    rel = nbformat.read(course / "notebooks" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in sol.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    edits = {"ada": {}, "bob": None, "cyd": {"warmup_answer": "def warmup_lr(step, base_lr, warmup_steps):\n"
                                             "    return base_lr\n"},
             "dan": {"speedup_answer": "def speedup(a, b:\n    return a / b\n"}, "eve": {},
             "fay": {"speedup_answer": "def speedup(baseline_s, fast_s):\n    return 2.0\n"}}
    for i, (student, edit) in enumerate(edits.items()):
        nb = nbformat.from_dict(rel)
        for c in nb.cells:
            grade_id = c.metadata.get("nbgrader", {}).get("grade_id")
            if edit is not None and grade_id in answers:
                c.source = edit.get(grade_id, answers[grade_id])
        folder = course / "submitted" / student / FIXTURE
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{FIXTURE}.ipynb")
        (folder / "timestamp.txt").write_text(f"2026-12-0{1 + i} 10:00:00.000000 UTC")


def gradebook(course: Path) -> list[tuple]:
    """Every submission's grades and comments, in a fixed order (ids and run times left out)."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="faster-pytorch") as gb:
        for sub in sorted(gb.assignment_submissions(FIXTURE), key=lambda s: s.student_id):
            rows.append((sub.student_id, str(sub.timestamp), sub.score, sub.max_score, sub.needs_manual_grade))
            for nb in sub.notebooks:
                for g in sorted(nb.grades, key=lambda g: g.name):
                    rows.append((sub.student_id, g.name, g.auto_score, g.manual_score, g.max_score,
                                 g.needs_manual_grade, g.failed_tests))
                for c in sorted(nb.comments, key=lambda c: c.name):
                    rows.append((sub.student_id, c.name, c.auto_comment, c.manual_comment))
    return rows


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = make_course(tmp_path_factory.mktemp("scale"))
    hand_ins(root)
    return root


@pytest.fixture(scope="module")
def serial(course) -> list[tuple]:
    proc = make(course, "autograde", "JOBS=1")
    assert "with 1 worker(s)" in proc.stdout, proc.stdout
    return gradebook(course)


def test_serial_grading_scores_as_expected(serial):
    totals = {row[0]: row[2] for row in serial if len(row) == 5}
    assert totals == {"ada": 5.0, "bob": 0.0, "cyd": 2.0, "dan": 3.0, "eve": 5.0, "fay": 3.0}, serial


def test_two_workers_leave_the_gradebook_a_serial_run_leaves(course, serial):
    proc = make(course, "autograde", "JOBS=2")
    assert "with 2 worker(s)" in proc.stdout, proc.stdout
    assert gradebook(course) == serial


@pytest.mark.slurm
def test_a_slurm_array_leaves_the_same_gradebook_and_reruns_only_what_is_missing(course, serial, tmp_path):
    why = slurm_available()
    if why:
        pytest.skip(why)
    (course / "gradebook.db").unlink()  # nothing carried over from the local runs
    with local_slurm(tmp_path / "slurm") as env:
        proc = make(course, "autograde-slurm", "WAIT=1", "PER_TASK=2", **env)
        assert "submitted job" in proc.stdout, proc.stdout + proc.stderr
        runs = course / "autograded" / ".runs" / FIXTURE
        assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == sorted(
            s[0] for s in serial if len(s) == 5)
        make(course, "grades")
        assert gradebook(course) == serial
        make(course, "grades")  # merging again changes nothing
        assert gradebook(course) == serial
        # a preempted task: its run is lost; submitting the same script again runs only that one
        lost = runs / "cyd"
        record = json.loads((runs / "ada" / "run.json").read_text())
        subprocess.run(["rm", "-rf", str(lost)], check=True)
        script = course / "autograded" / ".slurm" / "grade.sbatch"
        again = subprocess.run(["sbatch", "--wait", str(script)], cwd=course, capture_output=True, text=True,
                               env={**__import__("os").environ, **env}, timeout=600)
        assert again.returncode == 0, again.stdout + again.stderr
        logs = "".join(p.read_text() for p in (course / "autograded" / ".slurm" / "logs").glob("task-*.log"))
        assert logs.count("1 of 2 submission(s) to run") == 1, logs
        assert json.loads((runs / "ada" / "run.json").read_text()) == record  # not run again
        make(course, "grades")
        assert gradebook(course) == serial

"""Every exercise's test cell bites: committed wrong answers fail it, committed right ones pass it.

``tests/mutants/<lesson>/`` holds, for each autograded exercise, at least
:data:`MIN_WRONG` wrong answers (``ex<N>_wrong_*.py``, each naming its kind of hole) and at least
:data:`MIN_RIGHT` correct alternatives written differently from the solution
(``ex<N>_right_*.py``); :mod:`tests.mutants.run` (its docstring says how) runs each against the
exercise's test cell, visible and hidden tests, in a plain process without nbgrader. The solution
itself runs too and must pass (it proves the harness). Two lessons run at a time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "mutants"))
import run as mutants  # noqa: E402  (tests/mutants/run.py)

MIN_WRONG, MIN_RIGHT = 6, 1
JOBS = 2
LESSONS = sorted(p.parent.name for p in ROOT.glob("solutions/[0-9]*/*.ipynb"))
#: Lessons whose test cells launch real multi-process jobs (two torchrun launches of 3 and 4 ranks that each
#: import torch): about 13 s a variant on 2 cores idle, 6 minutes for all of lesson 10's. `make test` leaves
#: them out (their solutions' test cells still run in the grading round trip); `.ci/run` runs them
#: (COURSE_MUTANTS_LESSONS=10_distributed_data_parallel).
SLOW = {"10_distributed_data_parallel"}
#: COURSE_MUTANTS_LESSONS="a,b" runs only those lessons (default: every lesson but the slow ones).
RUN = [x for x in os.environ.get("COURSE_MUTANTS_LESSONS", "").split(",") if x] or \
    [lesson for lesson in LESSONS if lesson not in SLOW]


def exercises(lesson: str) -> list[str]:
    """The autograded exercises of a lesson (``ex1``, ``ex2``, ...), from its answer cells."""
    nb = mutants.notebook(lesson)
    return [g.removesuffix("_answer") for g in map(mutants.grade_id, nb.cells)
            if re.fullmatch(r"ex\d+_answer", g)]


@pytest.fixture(scope="session")
def outcomes() -> dict[tuple[str, str], dict]:
    """Every lesson's variants, in one runner process that imports torch once and forks a child per lesson."""
    env = {**os.environ, "COURSE_PROFILE": "smoke", "COURSE_DATASET": "digits", "COURSE_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "mutants" / "run.py"), *RUN, "--json",
                           "--jobs", str(JOBS)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=2400)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert rows and done.returncode in (0, 1), f"the runner failed: {done.stderr[-2000:]}"
    return {(r["lesson"], r["file"] if r["file"] != "solution" else f"{r['exercise']}_solution"): r for r in rows}


def _cases() -> list[tuple[str, str]]:
    cases = []
    for lesson in LESSONS:
        cases += [(lesson, f"{ex}_solution") for ex in exercises(lesson)]
        cases += [(lesson, p.name) for p in sorted((ROOT / "tests" / "mutants" / lesson).glob("ex*_*.py"))]
    return cases


@pytest.mark.slow
@pytest.mark.notebooks
@pytest.mark.parametrize("lesson,variant", _cases())
def test_variant(outcomes, lesson, variant):
    if lesson not in RUN:
        pytest.skip("a slow lesson (.ci/run runs it) or one COURSE_MUTANTS_LESSONS leaves out")
    row = outcomes.get((lesson, variant)) or outcomes.get((lesson, "(the runner)"))
    assert row is not None, f"{lesson}/{variant} was not run"
    path = ROOT / "tests" / "mutants" / lesson / variant
    if row["file"] == "(the runner)":
        pytest.fail(f"the runner failed on {lesson}: {row['message']}")
    if "_wrong_" in variant:
        assert not row["passed"], (f"{lesson}/{variant}: a wrong answer passed the test cell; "
                                   f"{mutants.header(path.read_text(), 'why') or ''}")
        expected = mutants.header(path.read_text(), "fails-with")
        if expected:
            assert re.search(expected, row["message"], re.I | re.S), \
                f"{lesson}/{variant} failed, but not with /{expected}/: {row['error']}: {row['message']}"
        assert row["error"] in {"AssertionError", "TypeError", "ValueError"} or expected, \
            f"{lesson}/{variant} failed by crashing ({row['error']}: {row['message']}), not by a test naming it"
    else:
        assert row["passed"], f"{lesson}/{variant}: a correct answer failed: {row['error']}: {row['message']}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_exercise_has_mutants_and_an_alternative(lesson):
    found = mutants.variants(lesson) if (ROOT / "tests" / "mutants" / lesson).is_dir() else {}
    for ex in exercises(lesson):
        files = found.get(ex, [])
        wrong = [p for p in files if "_wrong_" in p.name]
        right = [p for p in files if "_right_" in p.name]
        assert len(wrong) >= MIN_WRONG and len(right) >= MIN_RIGHT, (
            f"{lesson} {ex}: {len(wrong)} wrong answers and {len(right)} right ones in tests/mutants/{lesson}/ "
            f"(need {MIN_WRONG} and {MIN_RIGHT}): a test cell nobody tried to fool")
        for p in wrong:
            kind = mutants.header(p.read_text(), "kind")
            assert kind in mutants.KINDS, f"{p.name}: first lines need '# kind: <{'|'.join(mutants.KINDS)}>'"


@pytest.mark.slow
@pytest.mark.notebooks
def test_the_runner_reports_a_wrong_answer_that_passes_and_a_right_one_that_fails(tmp_path):
    """The harness itself: a "wrong" file that is the solution passes, a "right" one that raises fails."""
    lesson = LESSONS[0]
    nb = mutants.notebook(lesson)
    answer = next(c.source for c in nb.cells if mutants.grade_id(c) == "ex1_answer")
    folder = tmp_path / lesson
    folder.mkdir()
    (folder / "ex1_wrong_is_the_solution.py").write_text("# kind: logic\n" + answer)
    (folder / "ex1_right_raises.py").write_text("raise ValueError('not an answer')\n")
    env = {**os.environ, "COURSE_PROFILE": "smoke", "COURSE_DATASET": "digits", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "mutants" / "run.py"), lesson, "--json",
                           "--exercise", "ex1", "--dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    rows = {r["file"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 1, done.stderr[-2000:]
    assert rows["solution"]["passed"] and rows["ex1_wrong_is_the_solution.py"]["passed"]
    assert not rows["ex1_right_raises.py"]["passed"] and "not an answer" in rows["ex1_right_raises.py"]["message"]

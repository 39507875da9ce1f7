"""Grading round-trip with real nbgrader runs on a temporary copy of the course (CPU, smoke profile).

Every assignment in solutions/ and the fixture tests/fixtures/99_fixture/ is released, gets a set
of student submissions, and is graded ONCE: one `tools/grading.py autograde` call grades every
assignment (one nbgrader autograde run each), then one call each writes the grades CSV and the
feedback. The tests assert on the results, per assignment.

Submissions: good (the solution), blank (the release), partial (last exercise left as released,
and every test cell replaced by `pass`: autograde must restore the tests), broken (a syntax error
in the first answer and an infinite loop in the last), and five damaged files the pre-check must
set aside. Each executed notebook costs one run of the lesson in the smoke profile: four per
assignment. Lesson cells run under the course's own per-cell limit (nbgrader_config.py); only the
cell with the deliberate infinite loop gets COURSE_GRADING_TEST_LOOP_TIMEOUT seconds (default
10, through nbclient's `timeout_func`), so that the loop costs 10 s rather than the full limit.
"""

from __future__ import annotations

import collections
import copy
import csv
import fnmatch
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "99_fixture"
TOOLS = ["__init__.py", "nbgrader_plugins.py", "check_submissions.py", "grading.py"]
# COURSE_GRADING_ASSIGNMENTS="04_*,08_*" grades only those lessons (default: all; the fixture always)
ONLY = os.environ.get("COURSE_GRADING_ASSIGNMENTS", "*").split(",")
LESSONS = sorted(p.name for p in (ROOT / "solutions").glob("[0-9]*")
                 if p.is_dir() and any(fnmatch.fnmatch(p.name, pattern.strip()) for pattern in ONLY))
ASSIGNMENTS = [*LESSONS, FIXTURE.name]
LOOP_TIMEOUT = int(os.environ.get("COURSE_GRADING_TEST_LOOP_TIMEOUT", "10"))
LOOP_MARK = "an infinite loop left in by mistake"
LOOP = f"while True:  # {LOOP_MARK}\n    pass\n"
FIELDS = ["student", "assignment", "score", "max_score", "needs_manual_grade", "status", "notes"]
MARKERS = ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"]
# damaged submissions -> what the pre-check must say about them
DAMAGED = {"badjson": "invalid JSON", "renamed": "renamed", "stripped": "stripped",
           "deletedtest": "deleted", "dupcell": "duplicated"}
GRADED = ["good", "blank", "partial", "broken"]


# --- notebook helpers ------------------------------------------------------------------------

def nbg(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def answer_ids(nb) -> list[str]:
    return [nbg(c)["grade_id"] for c in nb.cells
            if c.cell_type == "code" and nbg(c).get("solution") and not nbg(c).get("grade")]


def check_ids(nb) -> list[str]:
    return [nbg(c)["grade_id"] for c in nb.cells
            if c.cell_type == "code" and nbg(c).get("grade") and not nbg(c).get("solution")]


def cell(nb, grade_id):
    return next(c for c in nb.cells if nbg(c).get("grade_id") == grade_id)


def secret_lines(nb) -> tuple[set[str], set[str]]:
    """(solution lines, hidden-test lines): stripped lines inside markers that occur nowhere else."""
    solution: set[str] = set()
    hidden: set[str] = set()
    outside: set[str] = set()
    for c in nb.cells:
        lines = c.source.splitlines()
        if nbg(c).get("solution") and "BEGIN SOLUTION" not in c.source:  # the whole cell is replaced
            solution |= {line.strip() for line in lines}
            continue
        where = outside
        for line in lines:
            if "BEGIN SOLUTION" in line or "BEGIN HIDDEN TESTS" in line:
                where = solution if "SOLUTION" in line else hidden
            elif "END SOLUTION" in line or "END HIDDEN TESTS" in line:
                where = outside
            else:
                where.add(line.strip())
    return ({s for s in solution - outside if len(s) >= 8}, {s for s in hidden - outside if len(s) >= 8})


def replace_solution(source: str, body: str) -> str:
    """Replace the region between the solution markers by ``body`` at the markers' indentation."""
    lines = source.split("\n")
    start = next(i for i, line in enumerate(lines) if "BEGIN SOLUTION" in line)
    end = next(i for i, line in enumerate(lines) if "END SOLUTION" in line)
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    return "\n".join(lines[:start] + [indent + b for b in body.split("\n")] + lines[end + 1:])


def submissions(sol, rel) -> dict[str, object]:
    """student -> notebook (raw text for invalid JSON; (file name, notebook) for a renamed file)."""
    answers, tests = answer_ids(sol), check_ids(sol)
    subs: dict[str, object] = {"good": sol, "blank": rel}
    partial = copy.deepcopy(sol)  # the last exercise left as released: it fails, the others pass
    cell(partial, answers[-1]).source = cell(rel, answers[-1]).source
    for grade_id in tests:  # tests edited away: the original tests must still grade it
        cell(partial, grade_id).source = "pass"
    subs["partial"] = partial
    broken = copy.deepcopy(sol)
    cell(broken, answers[0]).source += "\n\ndef broken(:\n    pass\n"
    # an infinite loop after the last answer's definitions: it hangs once, the timeout cuts it
    cell(broken, answers[-1]).source += "\n\n" + LOOP
    subs["broken"] = broken
    subs["badjson"] = nbformat.writes(sol)[:2000]
    subs["renamed"] = (f"Copy of {sol.metadata['name']}", sol)
    stripped = copy.deepcopy(sol)
    for c in stripped.cells:
        c.metadata.pop("nbgrader", None)
    subs["stripped"] = stripped
    deleted = copy.deepcopy(sol)
    deleted.cells = [c for c in deleted.cells if nbg(c).get("grade_id") != tests[0]]
    subs["deletedtest"] = deleted
    dup = copy.deepcopy(sol)
    i = next(i for i, c in enumerate(dup.cells) if nbg(c).get("grade_id") == answers[0])
    twin = copy.deepcopy(dup.cells[i])
    twin["id"] = "copy-of-" + str(twin.get("id", "cell"))
    dup.cells.insert(i + 1, twin)
    subs["dupcell"] = dup
    return subs


def html_text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def tool(course: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=course, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=7200)


def read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["name"] = path.name  # only in memory, for naming the renamed copy
    return nb


# --- fixtures --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A temporary course: config, grading tools, every lesson and the fixture, released."""
    root = tmp_path_factory.mktemp("course")
    config = (ROOT / "nbgrader_config.py").read_text()
    config += ("\n# test only: the deliberate infinite loop gets a short limit, other cells the course's\n"
               f"c.Execute.timeout_func = lambda cell, limit=c.Execute.timeout: {LOOP_TIMEOUT} "
               f"if {LOOP_MARK!r} in cell.source else limit\n")
    (root / "nbgrader_config.py").write_text(config)
    (root / "tools").mkdir()
    for name in TOOLS:
        shutil.copy(ROOT / "tools" / name, root / "tools" / name)
    for lesson in LESSONS:
        shutil.copytree(ROOT / "solutions" / lesson, root / "solutions" / lesson)
    shutil.copytree(FIXTURE, root / "solutions" / FIXTURE.name)
    proc = tool(root, "tools/grading.py", "release")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


@dataclass
class Run:
    """The outputs of the one grading pass over every assignment."""

    check: subprocess.CompletedProcess
    autograde: subprocess.CompletedProcess
    header: list[str]
    rows: dict[tuple[str, str], dict[str, str]]  # (assignment, student) -> CSV row


@pytest.fixture(scope="module")
def run(course) -> Run:
    """Write every assignment's submissions, then pre-check, autograde, grades and feedback once."""
    for a in ASSIGNMENTS:
        sol = read(course / "solutions" / a / f"{a}.ipynb")
        rel = read(course / "notebooks" / a / f"{a}.ipynb")
        for student, sub in submissions(sol, rel).items():
            folder = course / "submitted" / student / a
            folder.mkdir(parents=True)
            if isinstance(sub, str):
                (folder / f"{a}.ipynb").write_text(sub)
            elif isinstance(sub, tuple):
                nbformat.write(sub[1], folder / sub[0])
            else:
                nbformat.write(sub, folder / f"{a}.ipynb")
    check = tool(course, "tools/check_submissions.py")
    autograde = tool(course, "tools/grading.py", "autograde")
    print(autograde.stdout, autograde.stderr)
    grades = tool(course, "tools/grading.py", "grades", "--out", "grades.csv")
    assert grades.returncode == 0, grades.stdout + grades.stderr
    feedback = tool(course, "tools/grading.py", "feedback")
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    with (course / "grades.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = {(r["assignment"], r["student"]): r for r in reader}
    return Run(check, autograde, list(reader.fieldnames or []), rows)


@dataclass
class Graded:
    """One assignment's view of the grading pass, with its gradebook scores."""

    course: Path
    assignment: str
    solution: nbformat.NotebookNode
    release: nbformat.NotebookNode
    run: Run
    max_score: float
    scores: dict[str, float]      # gradebook score (auto + manual)
    auto: dict[str, float]        # autograded test cells only
    auto_max: float

    def row(self, student: str) -> dict[str, str]:
        return self.run.rows[(self.assignment, student)]

    def explain(self, student: str) -> str:
        out = self.run.autograde
        return (f"{self.assignment}/{student}: {self.run.rows.get((self.assignment, student))}\n"
                f"--- autograde output ---\n{out.stdout[-6000:]}{out.stderr[-2000:]}")


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, course, run) -> Graded:
    from nbgrader.api import Gradebook

    a = request.param
    sol = read(course / "solutions" / a / f"{a}.ipynb")
    rel = read(course / "notebooks" / a / f"{a}.ipynb")
    tests = set(check_ids(sol))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="faster-pytorch") as gb:
        max_score = gb.find_assignment(a).max_score
        scores, auto = {}, {}
        auto_max = 0.0
        for s in gb.assignment_submissions(a):
            grades = [g for nb in s.notebooks for g in nb.grades if g.name in tests]
            scores[s.student_id] = s.score
            auto[s.student_id] = sum(g.score or 0 for g in grades)
            auto_max = sum(g.max_score for g in grades)
    return Graded(course, a, sol, rel, run, max_score, scores, auto, auto_max)


# --- scores ----------------------------------------------------------------------------------

def test_solution_scores_full_autograded_marks_without_errors(graded):
    assert graded.auto_max > 0, "the assignment has no autograded tests"
    assert graded.auto["good"] == pytest.approx(graded.auto_max), graded.explain("good")
    row = graded.row("good")
    assert row["status"] == "graded" and row["notes"] == "", (
        "the solution raised errors or a cell ran out of time (the limit is in nbgrader_config.py): "
        + graded.explain("good"))


def test_unmodified_release_scores_zero(graded):
    assert graded.auto["blank"] == 0 and graded.scores["blank"] == 0, graded.explain("blank")


def test_partial_submission_scores_strictly_between(graded):
    assert 0 < graded.auto["partial"] < graded.auto_max, (
        "the partial submission (last exercise unanswered, test cells replaced by `pass`) must score "
        "strictly between 0 and the autograded maximum; full marks mean its edited tests were used\n"
        + graded.explain("partial"))


def test_edited_test_cells_are_replaced_by_the_original_tests(graded):
    path = graded.course / "autograded" / "partial" / graded.assignment / f"{graded.assignment}.ipynb"
    autograded = nbformat.read(path, as_version=4)
    for grade_id in check_ids(graded.solution):
        assert cell(autograded, grade_id).source == cell(graded.solution, grade_id).source


# --- robustness ------------------------------------------------------------------------------

def test_precheck_names_each_damaged_submission(graded):
    assert graded.run.check.returncode == 1
    lines = graded.run.check.stdout.splitlines()
    for student, what in DAMAGED.items():
        found = [line for line in lines if f"DAMAGED {student}/{graded.assignment}:" in line]
        assert found and any(what in line for line in found), (student, graded.run.check.stdout)
    for student in GRADED:
        assert f"DAMAGED {student}/{graded.assignment}:" not in graded.run.check.stdout


def test_damaged_submissions_are_set_aside_with_a_clear_entry(graded):
    for student, what in DAMAGED.items():
        row = graded.row(student)
        assert row["status"] == "damaged, not graded" and row["score"] == "" and what in row["notes"], row
        assert student not in graded.scores, f"{student} reached the gradebook"
    assert graded.run.autograde.returncode == 1  # some submissions were not graded, and it says so
    assert f"{len(DAMAGED) * len(ASSIGNMENTS)} submission(s) NOT graded" in graded.run.autograde.stdout


def test_every_sound_submission_is_graded_despite_the_bad_ones(graded):
    for student in GRADED:
        assert graded.row(student)["status"] == "graded", graded.explain(student)
        assert student in graded.scores


def test_syntax_error_and_infinite_loop_get_a_clear_entry(graded):
    notes = graded.row("broken")["notes"]
    assert "SyntaxError" in notes and "timed out" in notes, graded.explain("broken")
    assert graded.auto["broken"] < graded.auto_max


# --- what students get -----------------------------------------------------------------------

def test_release_contains_no_solution_or_hidden_tests(graded):
    path = graded.course / "notebooks" / graded.assignment / f"{graded.assignment}.ipynb"
    text = path.read_text(encoding="utf-8")
    for marker in MARKERS:
        assert marker not in text, f"{marker} in the release"
    released = {line.strip() for c in graded.release.cells for line in c.source.splitlines()}
    solution, hidden = secret_lines(graded.solution)
    assert hidden, "the solution notebook has no hidden tests"
    assert not solution & released, f"solution code in the release: {solution & released}"
    assert not hidden & released, f"hidden tests in the release: {hidden & released}"


def test_release_runs_without_nbgrader(graded):
    pattern = re.compile(r"^\s*(import nbgrader|from nbgrader\b|[%!]?\s*pip install .*nbgrader)", re.M)
    for c in graded.release.cells:
        if c.cell_type == "code":
            assert not pattern.search(c.source), c.source


def test_feedback_exists_per_graded_student_and_hides_hidden_tests(graded):
    # secret lines the release quotes anyway (say, in its prose) cannot leak; the others must not
    # appear anywhere in the feedback, tracebacks included
    public = "\n".join(c.source for c in graded.release.cells)
    solution, hidden = ([s for s in lines if s not in public] for lines in secret_lines(graded.solution))
    files = {p.parts[-3]: p for p in (graded.course / "feedback").glob(f"*/{graded.assignment}/*.html")}
    assert set(files) == set(GRADED), sorted(files)
    for student, path in files.items():
        text = html_text(path)
        leaked = [line for line in hidden if line in text] + [m for m in MARKERS[2:] if m in text]
        assert not leaked, f"{student}'s feedback shows hidden tests: {leaked}"
    blank = html_text(files["blank"])
    assert not [line for line in solution if line in blank], "solution code in the blank's feedback"


def test_feedback_switch_shows_hidden_tests(graded):
    if graded.assignment != FIXTURE.name:
        pytest.skip("checked once, on the fixture")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    proc = tool(graded.course, "-m", "nbgrader", "generate_feedback", graded.assignment, "--force",
                "--CourseDirectory.student_id=partial", "--CourseDirectory.feedback_directory=shown",
                COURSE_FEEDBACK_SHOW_HIDDEN="1", PATH=path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = html_text(graded.course / "shown" / "partial" / graded.assignment / f"{graded.assignment}.html")
    _, hidden = secret_lines(graded.solution)
    assert all(line in text for line in hidden)


# --- metadata and release --------------------------------------------------------------------

def test_grade_ids_are_unique_and_points_add_up(graded):
    ids = collections.Counter(nbg(c)["grade_id"] for c in graded.solution.cells if nbg(c).get("grade_id"))
    assert not [k for k, n in ids.items() if n > 1], ids
    points = [nbg(c).get("points") or 0 for c in graded.solution.cells if nbg(c).get("grade")]
    assert all(p > 0 for p in points), points
    assert graded.max_score == pytest.approx(sum(points))


def test_grades_csv_has_one_row_per_submission(graded):
    assert graded.run.header == FIELDS
    students = {s for a, s in graded.run.rows if a == graded.assignment}
    assert students == set(GRADED) | set(DAMAGED)
    for student in GRADED:
        row = graded.row(student)
        assert float(row["score"]) == pytest.approx(graded.scores[student])
        assert float(row["max_score"]) == pytest.approx(graded.max_score)


def test_committed_release_equals_a_fresh_generation(graded):
    if graded.assignment == FIXTURE.name:
        pytest.skip("the fixture has no committed release")
    for fresh in sorted((graded.course / "notebooks" / graded.assignment).glob("*.ipynb")):
        committed = ROOT / "notebooks" / graded.assignment / fresh.name
        assert committed.exists(), f"{committed.relative_to(ROOT)} missing: run make release"
        assert json.loads(committed.read_text()) == json.loads(fresh.read_text()), (
            f"{committed.relative_to(ROOT)} is stale: run make release")


def test_release_is_deterministic(course):
    before = {p: p.read_bytes() for p in sorted(course.glob("notebooks/*/*.ipynb"))}
    proc = tool(course, "tools/grading.py", "release")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in sorted(course.glob("notebooks/*/*.ipynb"))} == before


# --- fast checks of the tools' parts (no nbgrader run) ----------------------------------------

def test_log_parsing_names_failed_and_stopping_students():
    from tools.grading import _failures, _last_student

    log = "\n".join([
        "[AutogradeApp | INFO] Sanitizing /c/submitted/ann/01_x/01_x.ipynb",
        "[AutogradeApp | ERROR] There was an error processing assignment: /c/submitted/ann/01_x",
        "[AutogradeApp | ERROR] Traceback (most recent call last):",
        "      File \"x.py\", line 1, in f",
        "    nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'",
        "[AutogradeApp | INFO] Sanitizing /c/submitted/bob/01_x/01_x.ipynb",
        "[AutogradeApp | ERROR] One or more notebooks in the assignment use an old version ",
    ])
    assert _failures(log) == {"ann": "nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'"}
    assert _last_student(log, "01_x") == "bob"


def test_hidden_test_redaction_of_one_cell():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from tools.nbgrader_plugins import HideHiddenTests

    src = "assert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 'secret value'\n### END HIDDEN TESTS"
    tb = ["\x1b[36mCell\x1b[39m \x1b[32mIn[7]\x1b[39m, line 3", "----> 3 assert f(2) == 'secret value'"]
    c = new_code_cell(src, execution_count=7, outputs=[
        new_output("stream", name="stdout", text="expected: secret value\n"),
        new_output("error", ename="AssertionError", evalue="secret value", traceback=tb)])
    nb, _ = HideHiddenTests().preprocess(new_notebook(cells=[c]), {})
    text = json.dumps(nb)
    assert "secret value" not in text and "A hidden test failed: AssertionError" in text
    assert nb.cells[0].source == "assert f(1) == 1\n# (hidden tests: not shown)"

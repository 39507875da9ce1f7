"""Grading round-trip with real nbgrader runs on temporary copies of the course (CPU, smoke profile).

Designed to scale to 20 lessons (COURSE_DESIGN.md, test budget): the pipeline's behaviours are
graded once, on the fixture tests/fixtures/99_fixture; each lesson is executed twice only.

* Fixture (tiny, seconds per run): good (the solution), blank (the release), partial (last
  exercise left as released and every test cell replaced by `pass`: autograde must restore the
  tests and give partial credit), broken (a syntax error in the first answer and an infinite loop
  in the last).
* Every lesson: good (must score full marks with no error in any cell: this run is also the
  lesson's execution check, which nbval used to repeat) and blank (the release with every test cell
  replaced by `pass`: it scores zero only if autograde put the original tests back).
* Every assignment, fixture and lessons: five damaged files the pre-check must name and set aside
  (they are never executed, so they cost nothing), the release and feedback checks.

The assignments are split over JOBS temporary courses (one per CPU, at most 4), balanced by
lesson count with the fixture counted as two lessons, and graded concurrently, each in ONE
`tools/grading.py autograde` call (itself one nbgrader run), then one call each for the grades CSV
and the feedback. Lesson cells run under the course's own per-cell limit (nbgrader_config.py);
only the cell with the deliberate infinite loop gets COURSE_GRADING_TEST_LOOP_TIMEOUT seconds
(default 10, through nbclient's `timeout_func`). Autograding runs without COURSE_RESULTS_DIR,
and each temporary course has a results/ folder of its own: the tests check that neither it nor the
real checkout's results/ changed, because autograding sends the lessons' saved results elsewhere.
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
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

import course_utils as cu
from tools import sandbox

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "99_fixture"
TOOLS = sorted(p.name for p in (ROOT / "tools").glob("*.py"))
# COURSE_GRADING_ASSIGNMENTS="04_*,08_*" grades only those lessons (default: all; the fixture always)
ONLY = os.environ.get("COURSE_GRADING_ASSIGNMENTS", "*").split(",")
LESSONS = sorted(p.name for p in (ROOT / "solutions").glob("[0-9]*")
                 if p.is_dir() and any(fnmatch.fnmatch(p.name, pattern.strip()) for pattern in ONLY))
ASSIGNMENTS = [*LESSONS, FIXTURE.name]
# temporary courses graded concurrently: one per CPU this process may use, at most 4 (each costs
# ~40 s of CPU in nbgrader start-ups); COURSE_GRADING_JOBS overrides
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
JOBS = max(1, int(os.environ.get("COURSE_GRADING_JOBS") or min(4, CPUS)))
FIXTURE_COST = 2  # the fixture's four runs and extra checks cost about as much as two lessons


def shards(lessons: list[str], jobs: int) -> list[list[str]]:
    """Assignments per temporary course: each lesson goes to the least loaded one."""
    out, load = [[FIXTURE.name]] + [[] for _ in range(jobs - 1)], [FIXTURE_COST] + [0] * (jobs - 1)
    for lesson in lessons:
        i = load.index(min(load))
        out[i].append(lesson)
        load[i] += 1
    return [shard for shard in out if shard]


SHARDS = shards(LESSONS, JOBS)
LOOP_TIMEOUT = int(os.environ.get("COURSE_GRADING_TEST_LOOP_TIMEOUT", "10"))
LOOP_MARK = "an infinite loop left in by mistake"
LOOP = f"while True:  # {LOOP_MARK}\n    pass\n"
FIELDS = ["student", "assignment", "score", "max_score", "needs_manual_grade", "status", "notes"]
MARKERS = ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"]
# damaged submissions -> what the pre-check must say about them
DAMAGED = {"badjson": "invalid JSON", "renamed": "renamed", "stripped": "stripped",
           "deletedtest": "deleted", "dupcell": "duplicated"}
EXECUTED = {"fixture": ["good", "blank", "partial", "broken"], "lesson": ["good", "blank"]}


def executed(assignment: str) -> list[str]:
    """The submissions of an assignment that autograde runs."""
    return EXECUTED["fixture" if assignment == FIXTURE.name else "lesson"]


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


def tamper_tests(nb):
    """A copy of ``nb`` with every test cell's source replaced by `pass` (autograde must undo it)."""
    out = copy.deepcopy(nb)
    for grade_id in check_ids(nb):
        cell(out, grade_id).source = "pass"
    return out


def submissions(sol, rel, assignment: str) -> dict[str, object]:
    """student -> notebook (raw text for invalid JSON; (file name, notebook) for a renamed file)."""
    answers, tests = answer_ids(sol), check_ids(sol)
    subs: dict[str, object] = {"good": sol}
    if assignment == FIXTURE.name:
        subs["blank"] = rel
        partial = tamper_tests(sol)  # the last exercise left as released: it fails, the others pass
        cell(partial, answers[-1]).source = cell(rel, answers[-1]).source
        subs["partial"] = partial
        broken = copy.deepcopy(sol)
        cell(broken, answers[0]).source += "\n\ndef broken(:\n    pass\n"
        # an infinite loop after the last answer's definitions: it hangs once, the timeout cuts it
        cell(broken, answers[-1]).source += "\n\n" + LOOP
        subs["broken"] = broken
    else:
        subs["blank"] = tamper_tests(rel)
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


def tool(course: Path, *args: str, unset: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run([sys.executable, *args], cwd=course, capture_output=True, text=True,
                          env={**environ, **env}, timeout=7200)


def read(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nb.metadata["name"] = path.name  # only in memory, for naming the renamed copy
    return nb


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]] | None:
    """Every file under ``folder`` with its bytes and modification time (None: no folder)."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --- fixtures --------------------------------------------------------------------------------

def make_course(root: Path, assignments: list[str]) -> Path:
    """A temporary course: config, grading tools, these assignments released, a results/ folder."""
    config = (ROOT / "nbgrader_config.py").read_text()
    config += ("\n# test only: the deliberate infinite loop gets a short limit, other cells the course's\n"
               f"c.Execute.timeout_func = lambda cell, limit=c.Execute.timeout: {LOOP_TIMEOUT} "
               f"if {LOOP_MARK!r} in cell.source else limit\n")
    (root / "nbgrader_config.py").write_text(config)
    (root / "tools").mkdir()
    for name in TOOLS:
        shutil.copy(ROOT / "tools" / name, root / "tools" / name)
    # with course_utils/ beside nbgrader_config.py, a kernel in this course finds results/ here
    (root / "course_utils").symlink_to(ROOT / "course_utils", target_is_directory=True)
    (root / "results" / "some-machine").mkdir(parents=True)
    (root / "results" / "some-machine" / "04_mixed_precision.cpu.json").write_text('{"earlier": "cpu run"}\n')
    for a in assignments:
        shutil.copytree(FIXTURE if a == FIXTURE.name else ROOT / "solutions" / a, root / "solutions" / a)
    proc = tool(root, "tools/grading.py", "release")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root


@pytest.fixture(scope="module")
def courses(tmp_path_factory) -> dict[str, Path]:
    """assignment -> the temporary course that grades it (one course per shard)."""
    roots = [tmp_path_factory.mktemp("course") for _ in SHARDS]
    with ThreadPoolExecutor(len(SHARDS)) as pool:
        made = list(pool.map(make_course, roots, SHARDS))
    return {a: course for shard, course in zip(SHARDS, made) for a in shard}


@dataclass
class Run:
    """The outputs of the one grading pass of one temporary course."""

    course: Path
    check: subprocess.CompletedProcess
    autograde: subprocess.CompletedProcess
    header: list[str]
    rows: dict[tuple[str, str], dict[str, str]]  # (assignment, student) -> CSV row
    grades_one: subprocess.CompletedProcess       # `grades 99_fixture` after the full export
    rows_after_one: dict[tuple[str, str], dict[str, str]]
    results_before: dict | None                   # the course's results/ before autograding
    seconds: float
    checkout_results_unchanged: bool | None = None  # the real checkout's results/, before vs after


def read_rows(path: Path) -> tuple[list[str], dict[tuple[str, str], dict[str, str]]]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = {(r["assignment"], r["student"]): r for r in reader}
    return list(reader.fieldnames or []), rows


def grade_course(course: Path, assignments: list[str]) -> Run:
    """Write the submissions, then pre-check, autograde, grades (twice) and feedback once."""
    t0 = time.perf_counter()
    for a in assignments:
        sol = read(course / "solutions" / a / f"{a}.ipynb")
        rel = read(course / "notebooks" / a / f"{a}.ipynb")
        for student, sub in submissions(sol, rel, a).items():
            folder = course / "submitted" / student / a
            folder.mkdir(parents=True)
            if isinstance(sub, str):
                (folder / f"{a}.ipynb").write_text(sub)
            elif isinstance(sub, tuple):
                nbformat.write(sub[1], folder / sub[0])
            else:
                nbformat.write(sub, folder / f"{a}.ipynb")
    check = tool(course, "tools/check_submissions.py")
    results_before = snapshot(course / "results")
    # no COURSE_RESULTS_DIR from the test session: autograding itself must keep results/ clean
    # one worker per course (the courses themselves are graded concurrently); without bubblewrap the
    # lessons are still graded, with the test's rights (tests/test_grading_safety.py needs the sandbox)
    unsafe = [] if sandbox.find() else ["--unsafe"]
    autograde = tool(course, "tools/grading.py", "autograde", "--jobs", "1", *unsafe, unset=("COURSE_RESULTS_DIR",))
    print(autograde.stdout, autograde.stderr)
    grades = tool(course, "tools/grading.py", "grades", "--out", "grades.csv")
    assert grades.returncode == 0, grades.stdout + grades.stderr
    header, rows = read_rows(course / "grades.csv")
    one = assignments[0]
    grades_one = tool(course, "tools/grading.py", "grades", one, "--out", "grades.csv")
    assert grades_one.returncode == 0, grades_one.stdout + grades_one.stderr
    _, rows_after_one = read_rows(course / "grades.csv")
    feedback = tool(course, "tools/grading.py", "feedback")
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    return Run(course, check, autograde, header, rows, grades_one, rows_after_one, results_before,
               time.perf_counter() - t0)


@pytest.fixture(scope="module")
def runs(courses) -> dict[str, Run]:
    """assignment -> the grading pass of its course; the courses are graded concurrently."""
    by_course = collections.defaultdict(list)
    for a, course in courses.items():
        by_course[course].append(a)
    real_results = snapshot(ROOT / "results")
    with ThreadPoolExecutor(len(by_course)) as pool:
        done = list(pool.map(lambda item: grade_course(*item), by_course.items()))
    unchanged = snapshot(ROOT / "results") == real_results
    for run in done:
        run.checkout_results_unchanged = unchanged
        print(f"graded {sorted(a for a, c in courses.items() if c == run.course)} in {run.seconds:.0f} s")
    return {a: run for run in done for a in ASSIGNMENTS if courses.get(a) == run.course}


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

    @property
    def executed(self) -> list[str]:
        return executed(self.assignment)

    def row(self, student: str) -> dict[str, str]:
        return self.run.rows[(self.assignment, student)]

    def explain(self, student: str) -> str:
        out = self.run.autograde
        return (f"{self.assignment}/{student}: {self.run.rows.get((self.assignment, student))}\n"
                f"--- autograde output ---\n{out.stdout[-6000:]}{out.stderr[-2000:]}")


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, runs) -> Graded:
    from nbgrader.api import Gradebook

    a = request.param
    run = runs[a]
    sol = read(run.course / "solutions" / a / f"{a}.ipynb")
    rel = read(run.course / "notebooks" / a / f"{a}.ipynb")
    tests = set(check_ids(sol))
    with Gradebook(f"sqlite:///{run.course / 'gradebook.db'}", course_id="faster-pytorch") as gb:
        max_score = gb.find_assignment(a).max_score
        scores, auto = {}, {}
        auto_max = 0.0
        for s in gb.assignment_submissions(a):
            grades = [g for nb in s.notebooks for g in nb.grades if g.name in tests]
            scores[s.student_id] = s.score
            auto[s.student_id] = sum(g.score or 0 for g in grades)
            auto_max = sum(g.max_score for g in grades)
    return Graded(run.course, a, sol, rel, run, max_score, scores, auto, auto_max)


def only_fixture(graded: Graded) -> None:
    if graded.assignment != FIXTURE.name:
        pytest.skip("a pipeline behaviour: checked once, on the fixture")


# --- scores ----------------------------------------------------------------------------------
# Every test that reads the grading pass (graded, courses) is marked slow: real nbgrader runs of every
# lesson, left out of `make check`; the fast checks of the tools' parts at the end are not.

@pytest.mark.slow
@pytest.mark.notebooks
def test_solution_scores_full_autograded_marks_without_errors(graded):
    """Also the execution check of every solution: no cell may raise or run out of time."""
    assert graded.auto_max > 0, "the assignment has no autograded tests"
    assert graded.auto["good"] == pytest.approx(graded.auto_max), graded.explain("good")
    row = graded.row("good")
    assert row["status"] == "graded" and row["notes"] == "", (
        "the solution raised errors or a cell ran out of time (the limit is in nbgrader_config.py): "
        + graded.explain("good"))


@pytest.mark.slow
@pytest.mark.notebooks
def test_blank_release_scores_zero(graded):
    # lessons: the blank's test cells were replaced by `pass`, so zero also proves they were restored
    assert graded.auto["blank"] == 0 and graded.scores["blank"] == 0, graded.explain("blank")


def autograded(graded: Graded, student: str) -> nbformat.NotebookNode:
    a = graded.assignment
    return read(graded.course / "autograded" / student / a / f"{a}.ipynb")


def output_text(c) -> str:
    return "".join(o.get("text", "") + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in c.get("outputs", []))


@pytest.mark.slow
@pytest.mark.notebooks
def test_a_solution_never_needs_an_unfinished_exercise(graded):
    """cu.needs hides a NameError or a stub only in a release: in the solution it must never fire."""
    fired = [i for i, c in enumerate(autograded(graded, "good").cells)
             if c.cell_type == "code" and cu.lesson.exercises.MESSAGE in output_text(c)]
    assert not fired, f"{graded.assignment}: cells {fired} of the solution printed cu.needs' message"


@pytest.mark.slow
@pytest.mark.notebooks
def test_blank_release_stops_only_where_the_learner_works(graded):
    """An unfinished exercise fails its own test cells, never a lesson cell cells later (cu.needs)."""
    if graded.assignment == FIXTURE.name:
        pytest.skip("the fixture is a pipeline input, not a lesson")
    nb = autograded(graded, "blank")
    failed = [(i, o.get("ename"), (o.get("evalue") or "")[:80]) for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and not (nbg(c).get("grade") or nbg(c).get("solution"))
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not failed, (f"{graded.assignment}: lesson cells fail while an exercise is unfinished; "
                        f"wrap them in `with cu.needs(\"Exercise N\"):` {failed}")


@pytest.mark.slow
@pytest.mark.notebooks
def test_partial_submission_scores_strictly_between(graded):
    only_fixture(graded)
    assert 0 < graded.auto["partial"] < graded.auto_max, (
        "the partial submission (last exercise unanswered, test cells replaced by `pass`) must score "
        "strictly between 0 and the autograded maximum; full marks mean its edited tests were used\n"
        + graded.explain("partial"))


@pytest.mark.slow
@pytest.mark.notebooks
def test_edited_test_cells_are_replaced_by_the_original_tests(graded):
    tampered = "partial" if graded.assignment == FIXTURE.name else "blank"
    path = graded.course / "autograded" / tampered / graded.assignment / f"{graded.assignment}.ipynb"
    autograded = nbformat.read(path, as_version=4)
    for grade_id in check_ids(graded.solution):
        assert cell(autograded, grade_id).source == cell(graded.solution, grade_id).source


# --- robustness ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.notebooks
def test_precheck_names_each_damaged_submission(graded):
    assert graded.run.check.returncode == 1
    lines = graded.run.check.stdout.splitlines()
    for student, what in DAMAGED.items():
        found = [line for line in lines if f"DAMAGED {student}/{graded.assignment}:" in line]
        assert found and any(what in line for line in found), (student, graded.run.check.stdout)
    for student in graded.executed:
        assert f"DAMAGED {student}/{graded.assignment}:" not in graded.run.check.stdout


@pytest.mark.slow
@pytest.mark.notebooks
def test_damaged_submissions_are_set_aside_with_a_clear_entry(graded):
    for student, what in DAMAGED.items():
        row = graded.row(student)
        assert row["status"] == "damaged, not graded" and row["score"] == "" and what in row["notes"], row
        assert student not in graded.scores, f"{student} reached the gradebook"
    assert graded.run.autograde.returncode == 1  # some submissions were not graded, and it says so
    in_course = sum(1 for a, r in graded.run.rows if r == "badjson")
    assert f"{len(DAMAGED) * in_course} submission(s) NOT graded" in graded.run.autograde.stdout


@pytest.mark.slow
@pytest.mark.notebooks
def test_every_sound_submission_is_graded_despite_the_bad_ones(graded):
    for student in graded.executed:
        assert graded.row(student)["status"] == "graded", graded.explain(student)
        assert student in graded.scores


@pytest.mark.slow
@pytest.mark.notebooks
def test_syntax_error_and_infinite_loop_get_a_clear_entry(graded):
    only_fixture(graded)
    notes = graded.row("broken")["notes"]
    assert "SyntaxError" in notes and "timed out" in notes, graded.explain("broken")
    assert graded.auto["broken"] < graded.auto_max


@pytest.mark.slow
@pytest.mark.notebooks
def test_all_assignments_are_graded_in_one_nbgrader_run(graded):
    """One worker (--jobs 1): one nbgrader run executes every submission, one more scores them."""
    logs = graded.course / "autograded" / ".logs"
    ran, scored = (logs / "autograde-worker0.log").read_text(), (logs / "merge.log").read_text()
    assert ran.count("$ nbgrader autograde") == 1, ran[:2000]
    assert scored.count("$ nbgrader autograde") == 1, scored[:2000]


# --- results ---------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.notebooks
def test_autograde_leaves_results_untouched(graded):
    """A smoke autograde writes no result into the course's results/ (nor the checkout's)."""
    assert graded.run.results_before is not None
    assert graded.run.checkout_results_unchanged, "grading wrote into the checkout's results/"
    assert snapshot(graded.course / "results") == graded.run.results_before, "autograde changed results/"
    good = graded.course / "autograded" / "good" / graded.assignment / f"{graded.assignment}.ipynb"
    outputs = "\n".join(str(o.get("text", "")) for c in nbformat.read(good, as_version=4).cells
                        for o in c.get("outputs", []))
    saved = re.findall(r"^saved\s+(\S+\.json)(?: \(left out, None: [^)]*\))?\s*$", outputs, flags=re.M)
    assert saved, "the graded solution saved no result: the check above would prove nothing"
    for path in saved:
        assert not Path(path).is_relative_to(graded.course) and not Path(path).is_relative_to(ROOT), path
        assert path.endswith(".smoke.json"), f"the result file is not keyed by its profile: {path}"
    assert "now deleted; results/ is untouched" in graded.run.autograde.stdout or (
        "deleted with their sandboxes; results/ is untouched" in graded.run.autograde.stdout)


# --- what students get -----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.notebooks
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


@pytest.mark.slow
@pytest.mark.notebooks
def test_release_runs_without_nbgrader(graded):
    pattern = re.compile(r"^\s*(import nbgrader|from nbgrader\b|[%!]?\s*pip install .*nbgrader)", re.M)
    for c in graded.release.cells:
        if c.cell_type == "code":
            assert not pattern.search(c.source), c.source


@pytest.mark.slow
@pytest.mark.notebooks
def test_feedback_exists_per_graded_student_and_hides_hidden_tests(graded):
    # secret lines the release quotes anyway (say, in its prose) cannot leak; the others must not
    # appear anywhere in the feedback, tracebacks included
    public = "\n".join(c.source for c in graded.release.cells)
    solution, hidden = ([s for s in lines if s not in public] for lines in secret_lines(graded.solution))
    files = {p.parts[-3]: p for p in (graded.course / "feedback").glob(f"*/{graded.assignment}/*.html")}
    assert set(files) == set(graded.executed), sorted(files)
    tests = set(check_ids(graded.solution))
    for student, path in files.items():
        text = html_text(path)
        # a hidden test may hold a reference implementation that matches a student's own answer
        # line for line (the good submission is the solution): those lines are the student's own
        # (or contains one: `return lrs, losses` in `return lrs, losses, suggest(...)`): the
        # student's own lines are taken out of the text before searching it
        submitted = read(graded.course / "submitted" / student / graded.assignment / f"{graded.assignment}.ipynb")
        own = {line.strip() for c in submitted.cells if nbg(c).get("grade_id") not in tests
               for line in c.source.splitlines() if len(line.strip()) >= 8}
        for line in sorted(own, key=len, reverse=True):
            text = text.replace(line, "")
        leaked = [line for line in hidden if line in text] + [m for m in MARKERS[2:] if m in text]
        assert not leaked, f"{student}'s feedback shows hidden tests: {leaked}"
    blank = html_text(files["blank"])
    assert not [line for line in solution if line in blank], "solution code in the blank's feedback"


@pytest.mark.slow
@pytest.mark.notebooks
def test_feedback_switch_shows_hidden_tests(graded):
    only_fixture(graded)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    proc = tool(graded.course, "-m", "nbgrader", "generate_feedback", graded.assignment, "--force",
                "--CourseDirectory.student_id=partial", "--CourseDirectory.feedback_directory=shown",
                COURSE_FEEDBACK_SHOW_HIDDEN="1", PATH=path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = html_text(graded.course / "shown" / "partial" / graded.assignment / f"{graded.assignment}.html")
    _, hidden = secret_lines(graded.solution)
    assert all(line in text for line in hidden)


# --- metadata, grades and release ------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.notebooks
def test_grade_ids_are_unique_and_points_add_up(graded):
    ids = collections.Counter(nbg(c)["grade_id"] for c in graded.solution.cells if nbg(c).get("grade_id"))
    assert not [k for k, n in ids.items() if n > 1], ids
    points = [nbg(c).get("points") or 0 for c in graded.solution.cells if nbg(c).get("grade")]
    assert all(p > 0 for p in points), points
    assert graded.max_score == pytest.approx(sum(points))


@pytest.mark.slow
@pytest.mark.notebooks
def test_grades_csv_has_one_row_per_submission(graded):
    assert graded.run.header == FIELDS
    students = {s for a, s in graded.run.rows if a == graded.assignment}
    assert students == set(graded.executed) | set(DAMAGED)
    for student in graded.executed:
        row = graded.row(student)
        assert float(row["score"]) == pytest.approx(graded.scores[student])
        assert float(row["max_score"]) == pytest.approx(graded.max_score)


@pytest.mark.slow
@pytest.mark.notebooks
def test_grades_of_one_assignment_keep_the_other_rows(graded):
    """`make grades A=<one>` merges by (student, assignment): no other assignment's row is dropped."""
    assert graded.run.rows_after_one == graded.run.rows
    out = graded.run.grades_one.stdout
    assert "merged into grades.csv (by student and assignment" in out, out
    others = sorted({a for a, _ in graded.run.rows} - {graded.run.grades_one.args[3]})
    if others:
        assert f"of other assignments from the existing file: {', '.join(others)}" in out, out


@pytest.mark.slow
@pytest.mark.notebooks
def test_committed_release_equals_a_fresh_generation(graded):
    if graded.assignment == FIXTURE.name:
        pytest.skip("the fixture has no committed release")
    from tools.release_check import differences  # `make release-check`'s comparison

    problems = differences(graded.course / "notebooks", ROOT / "notebooks", [graded.assignment])
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.notebooks
def test_release_is_deterministic(courses):
    def again(course: Path) -> None:
        before = {p: p.read_bytes() for p in sorted(course.glob("notebooks/*/*.ipynb"))}
        proc = tool(course, "tools/grading.py", "release")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert {p: p.read_bytes() for p in sorted(course.glob("notebooks/*/*.ipynb"))} == before

    with ThreadPoolExecutor(len(set(courses.values()))) as pool:
        list(pool.map(again, sorted(set(courses.values()))))


# --- fast checks of the tools' parts (no nbgrader run) ----------------------------------------

def test_log_parsing_names_failed_and_stopping_submissions():
    from tools.grading import failures, last_submission

    log = "\n".join([
        "[AutogradeApp | INFO] Sanitizing /c/submitted/ann/01_x/01_x.ipynb",
        "[AutogradeApp | ERROR] There was an error processing assignment: /c/submitted/ann/01_x",
        "[AutogradeApp | ERROR] Traceback (most recent call last):",
        "      File \"x.py\", line 1, in f",
        "    nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'",
        "[AutogradeApp | INFO] Sanitizing /tmp/course-autograde-x/submitted/bob/02_y/02_y.ipynb",
        "[AutogradeApp | ERROR] One or more notebooks in the assignment use an old version ",
    ])
    assert failures(log) == {("ann", "01_x"): "nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'"}
    assert last_submission(log) == ("bob", "02_y")
    summary = "[AutogradeApp | ERROR] There was an error processing assignment '02_y' for student 'bob'"
    assert failures(summary) == {("bob", "02_y"): "nbgrader error (see the log)"}


def test_grades_merge_keeps_rows_and_refuses_a_foreign_file(tmp_path):
    from tools.grading import merge_rows, read_grades

    old = [{"student": "ann", "assignment": "01_x", "score": "3"},
           {"student": "bob", "assignment": "04_y", "score": "1"},
           {"student": "cid", "assignment": "04_y", "score": "2"}]
    new = [{"student": "bob", "assignment": "04_y", "score": 5}]
    rows, kept = merge_rows(old, new)
    assert rows == [old[0], new[0], old[2]] and kept == [old[0], old[2]]
    (tmp_path / "grades.csv").write_text("name,points\nann,3\n")
    with pytest.raises(ValueError, match="not a grades file"):
        read_grades(tmp_path / "grades.csv")
    assert read_grades(tmp_path / "missing.csv") == []


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


# --- zip-collect: an unsafe member of an LMS zip is skipped, the rest collected -------------

def test_unsafe_zip_members_are_named_and_dropped():
    import io
    import zipfile

    from tools.grading import clean_zip, unsafe_member

    assert [n for n in ["a__x.ipynb", "d/a__x.ipynb", "../a__x.ipynb", "d/../../a", "/etc/a", "..\\a", "C:a"]
            if unsafe_member(n)] == ["../a__x.ipynb", "d/../../a", "/etc/a", "..\\a", "C:a"]
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("ok__x.ipynb", "{}")
        zf.writestr("../../deep__x.ipynb", "{}")
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("a__x.ipynb", "{}")
        zf.writestr("../b__x.ipynb", "{}")
        zf.writestr("more.zip", inner.getvalue())
    data, skipped = clean_zip(io.BytesIO(outer.getvalue()), "week.zip")
    assert skipped == ["'../b__x.ipynb' in week.zip", "'../../deep__x.ipynb' in week.zip/more.zip"]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.namelist() == ["a__x.ipynb", "more.zip"]
        assert zipfile.ZipFile(io.BytesIO(zf.read("more.zip"))).namelist() == ["ok__x.ipynb"]
    assert clean_zip(io.BytesIO(inner.getvalue().replace(b"../../", b"sub/d/")), "safe.zip") == (None, [])


@pytest.mark.slow  # nbgrader generates the release of a temporary course first
@pytest.mark.notebooks
def test_zip_collect_skips_an_unsafe_member_and_collects_the_rest(tmp_path):
    import zipfile

    a = FIXTURE.name
    course = make_course(tmp_path, [a])
    notebook = (course / "notebooks" / a / f"{a}.ipynb").read_text()
    archive = course / "downloaded" / a / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "week.zip", "w") as zf:  # the unsafe member between two sound ones
        zf.writestr(f"alice__{a}.ipynb", notebook)
        zf.writestr(f"../mallory__{a}.ipynb", notebook)
        zf.writestr(f"bob__{a}.ipynb", notebook)
    (archive / f"carol__{a}.ipynb").write_text(notebook)  # a loose file beside the zip
    original = (archive / "week.zip").read_bytes()
    proc = tool(course, "tools/grading.py", "zip-collect")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"skipped unsafe zip member '../mallory__{a}.ipynb' in downloaded/{a}/archive/week.zip" in out
    assert sorted(p.parts[-3] for p in course.glob(f"submitted/*/{a}/{a}.ipynb")) == ["alice", "bob", "carol"]
    assert not list(course.rglob("mallory*")), "the unsafe member must not be written anywhere"
    assert (archive / "week.zip").read_bytes() == original, "the instructor's download is left as it was"
    assert not (course / "downloaded" / a / ".archive-checked").exists()

    (archive / f"carol__{a}.ipynb").unlink()
    with zipfile.ZipFile(archive / "week.zip", "w") as zf:  # nothing sound left: a clear failure
        zf.writestr(f"../mallory__{a}.ipynb", notebook)
    proc = tool(course, "tools/grading.py", "zip-collect")
    assert proc.returncode == 1 and "nothing could be collected" in proc.stdout, proc.stdout + proc.stderr

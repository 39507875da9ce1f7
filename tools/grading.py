"""The instructor's grading workflow on nbgrader 0.9.6, as the Makefile runs it (see INSTRUCTORS.md).

    python tools/grading.py release                 notebooks/ from solutions/ (no gradebook touched)
    python tools/grading.py collect FOLDER          FOLDER/<student>/<assignment>/ -> submitted/
    python tools/grading.py zip-collect [A ...]     downloaded/<A>/archive/<student>__<nb>.ipynb -> submitted/
    python tools/grading.py autograde [A ...] [--timeout S] [--student S ...]
    python tools/grading.py grades [A ...] [--out grades.csv]
    python tools/grading.py feedback [A ...]

Without assignments, every assignment with submissions is processed. ``autograde`` runs the
pre-check (tools/check_submissions.py) and sets damaged submissions aside, grades all the others
in one nbgrader call per assignment (each call costs ~5 s of start-up), in the smoke profile, and
if nbgrader still stops on one submission it records that one as failed and grades the rest.
Its log and the failures are kept in autograded/.logs/ for ``grades``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.check_submissions import find_problems, submitted_assignments  # noqa: E402

REPORTS = ROOT / "autograded" / ".logs"  # hidden from nbgrader, kept by make clean
FIELDS = ["student", "assignment", "score", "max_score", "needs_manual_grade", "status", "notes"]
STUDENT_ID = re.compile(r"[A-Za-z0-9_.@+-]+")
RAISES = {"raises-exception", "nbval-raises-exception"}
MAX_RESTARTS = 5  # how often autograde restarts after nbgrader stopped on one submission


def _env(**extra: str) -> dict[str, str]:
    """Environment for nbgrader: the venv's bin on PATH (nbgrader runs `alembic` from it)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    env.update(extra)
    return env


def nbgrader(args: list[str], *, log: Path | None = None, echo: Callable[[str], str | None] | None = None,
             **env: str) -> tuple[int, str]:
    """Run ``python -m nbgrader ARGS`` in the course root; return (exit status, output).

    The output is appended to ``log``; ``echo`` maps an output line to what to print (or None).
    """
    proc = subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=ROOT, env=_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        shown = echo(line) if echo else None
        if shown:
            print(shown, flush=True)
    text = "".join(lines)
    rc = proc.wait()
    if "Exception while loading config file" in text:  # nbgrader would go on with its defaults
        print(text, file=sys.stderr)
        rc = rc or 1
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ nbgrader {' '.join(args)}\n{text}\n")
    return rc, text


def _config() -> tuple[str, str]:
    """(course id, gradebook URL) from nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    course = cfg.CourseDirectory
    return course.course_id, course.get("db_url", f"sqlite:///{ROOT / 'gradebook.db'}")


def lessons() -> list[str]:
    """Assignments in solutions/."""
    return sorted(p.name for p in (ROOT / "solutions").glob("[0-9]*") if p.is_dir())


def _pattern(assignments: list[str]) -> str:
    return assignments[0] if len(assignments) == 1 else "*"


# --- release -----------------------------------------------------------------------------------

def release(assignments: list[str]) -> int:
    """Regenerate notebooks/<a>/ from solutions/<a>/ (deterministic; the gradebook is not touched)."""
    assignments = assignments or lessons()
    if not assignments:
        print("no lessons in solutions/ yet: nothing to release")
        return 0
    pattern = _pattern(assignments)
    rc, text = nbgrader(["generate_assignment", f"--assignment={pattern}", "--force", "--no-db"])
    if rc:
        print(text)
        return rc
    for a in assignments:
        names = [p.name for p in sorted((ROOT / "notebooks" / a).glob("*.ipynb"))]
        print(f"notebooks/{a}/: {', '.join(names)}")
    return 0


# --- collecting ------------------------------------------------------------------------------

def collect(source: Path) -> int:
    """Copy SOURCE/<student>/<assignment>/ into submitted/ (a resubmission replaces the old one)."""
    known = set(lessons()) | {p.name for p in (ROOT / "notebooks").glob("[0-9]*") if p.is_dir()}
    done = 0
    for folder in sorted(source.glob("*/*")):
        if not folder.is_dir():
            continue
        student, assignment = folder.parent.name, folder.name
        if assignment not in known:
            print(f"skipped {folder}: '{assignment}' is not an assignment (expected one of {sorted(known)})")
            continue
        if not STUDENT_ID.fullmatch(student):
            print(f"skipped {folder}: student id '{student}' may only use letters, digits and _ . @ + -")
            continue
        dest = ROOT / "submitted" / student / assignment
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(folder, dest)
        done += 1
    print(f"collected {done} submission(s) into submitted/; next: make check-submissions")
    return 0 if done else 1


def zip_collect(assignments: list[str]) -> int:
    """Import LMS downloads: downloaded/<a>/archive/<student>__<notebook>.ipynb (or .zip of them)."""
    found = sorted(p.parent.name for p in ROOT.glob("downloaded/*/archive") if p.is_dir())
    assignments = assignments or found
    if not assignments:
        print("nothing in downloaded/<assignment>/archive/ (see INSTRUCTORS.md, 'From an LMS zip')")
        return 1
    status = 0
    for a in assignments:
        rc, text = nbgrader(["zip_collect", a, "--force"], log=REPORTS / f"zip-collect-{a}.log",
                            echo=lambda line: line.rstrip() if "WARNING" in line or "files collected" in line
                            or "ERROR" in line else None)
        status |= rc
    print("next: make check-submissions")
    return status


# --- autograding -----------------------------------------------------------------------------

def _records(text: str) -> list[str]:
    """nbgrader's log split into records (a record starts with '[')."""
    records: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return records


def _failures(text: str) -> dict[str, str]:
    """Students nbgrader reported as failed, each with the last line of its traceback."""
    failed: dict[str, str] = {}
    records = _records(text)
    for i, record in enumerate(records):
        m = re.search(r"There was an error processing assignment: .*[/\\]([^/\\]+)[/\\][^/\\]+$", record)
        if m:
            trace = records[i + 1] if i + 1 < len(records) else ""
            lines = [line.strip() for line in trace.splitlines() if line.strip()]
            failed[m.group(1)] = lines[-1] if lines else "nbgrader error (see the log)"
    summary = r"There was an error processing assignment '[^']*' for student '([^']*)'"
    for student in re.findall(summary, text):
        failed.setdefault(student, "nbgrader error (see the log)")
    return failed


def _last_student(text: str, assignment: str) -> str | None:
    """The student nbgrader was working on last (to name the one that stopped a run)."""
    found = re.findall(r"(?:submitted|autograded)[/\\]([^/\\]+)[/\\]" + re.escape(assignment)
                       + r"|Creating/updating student with ID '([^']+)'", text)
    return next((a or b for a, b in reversed(found)), None)


def _progress(line: str) -> str | None:
    m = re.search(r"Autograding .*[/\\]autograded[/\\]([^/\\]+)[/\\]", line)
    if m:
        return f"  grading {m.group(1)}"
    if "Timeout waiting for execute reply" in line:
        return "    a cell ran out of time and was interrupted"
    return None


def _graded(assignment: str, student: str) -> bool:
    return any((ROOT / "autograded" / student / assignment).glob("*.ipynb"))


def autograde_one(assignment: str, timeout: int | None, only: list[str] | None = None,
                  precheck: bool = True) -> dict[str, dict[str, str]]:
    """Grade every sound submission of one assignment (or those of ``only``).

    Returns {'damaged': {student: problems}, 'failed': {student: reason}}. ``precheck=False`` hands
    damaged submissions to nbgrader too (to exercise the fallback).
    """
    everyone = sorted(p.parent.name for p in ROOT.glob(f"submitted/*/{assignment}") if p.is_dir())
    students = [s for s in everyone if not only or s in only]
    problems = find_problems(ROOT, assignment)[0] if precheck else {}
    problems = {s: p for s, p in problems.items() if s in students}
    for student in students:  # results are only ever those of the current submissions
        shutil.rmtree(ROOT / "autograded" / student / assignment, ignore_errors=True)
        if student in problems:
            shutil.rmtree(ROOT / "feedback" / student / assignment, ignore_errors=True)
    pending = [s for s in students if s not in problems]
    print(f"{assignment}: grading {len(pending)} submission(s) in the smoke profile; "
          f"{len(problems)} damaged, set aside")
    log = REPORTS / f"autograde-{assignment}.log"
    log.unlink(missing_ok=True)
    failed: dict[str, str] = {}
    for _ in range(MAX_RESTARTS + 1):
        if not pending:
            break
        exclude = ",".join(s for s in everyone if s not in pending)
        args = ["autograde", assignment, f"--CourseDirectory.student_id_exclude={exclude}"]
        if timeout:
            args.append(f"--Execute.timeout={timeout}")
        rc, text = nbgrader(args, log=log, echo=_progress, COURSE_PROFILE="smoke")
        failed.update({s: r for s, r in _failures(text).items() if s in pending})
        left = [s for s in pending if not _graded(assignment, s) and s not in failed]
        if not left or rc == 0:
            failed.update({s: "nbgrader did not grade it (see the log)" for s in left})
            break
        # nbgrader stopped the whole run on one submission: record it, grade the others again
        errors = [r.split("] ", 1)[-1].splitlines()[0] for r in _records(text) if "| ERROR]" in r]
        error = errors[-1] if errors else f"exit status {rc}"
        culprit = _last_student(text, assignment)
        if culprit not in left:  # not about one submission: give up on the rest
            failed.update({s: f"nbgrader stopped: {error}" for s in left})
            break
        failed[culprit] = f"nbgrader stopped on it: {error}"
        pending = [s for s in left if s != culprit]
    else:
        failed.update({s: "not graded: nbgrader stopped too often (see the log)" for s in pending})
    for student in failed:
        shutil.rmtree(ROOT / "feedback" / student / assignment, ignore_errors=True)
    report = {"damaged": {s: "; ".join(p) for s, p in problems.items()}, "failed": failed}
    path = REPORTS / f"autograde-{assignment}.json"
    old = json.loads(path.read_text())["failed"] if path.exists() else {}
    kept = {s: r for s, r in old.items() if s not in students}  # students not regraded this time
    path.write_text(json.dumps({**report, "failed": {**kept, **failed}}, indent=1))
    return report


def autograde(assignments: list[str], timeout: int | None, only: list[str] | None = None,
              precheck: bool = True) -> int:
    """Register the assignments in the gradebook, grade them, print the results; 1 if any not graded."""
    assignments = assignments or submitted_assignments(ROOT)
    if not assignments:
        print("nothing to grade: submitted/<student>/<assignment>/ is empty (make collect FROM=...)")
        return 0
    REPORTS.mkdir(parents=True, exist_ok=True)
    # generate_assignment stores the graded cells (with hidden tests) in the gradebook; its
    # output goes to a temporary folder, so the committed notebooks/ are not touched.
    with tempfile.TemporaryDirectory() as tmp:
        rc, text = nbgrader(["generate_assignment", f"--assignment={_pattern(assignments)}", "--force",
                             f"--CourseDirectory.release_directory={tmp}"], log=REPORTS / "register.log")
    if rc:
        print(text)
        return rc
    not_graded = 0
    for a in assignments:
        report = autograde_one(a, timeout, only, precheck)
        not_graded += len(report["damaged"]) + len(report["failed"])
        print_rows(grade_rows(a))
    if not_graded:
        print(f"{not_graded} submission(s) NOT graded (listed above, with the reason); all others were. "
              "Fix them as INSTRUCTORS.md says and run make autograde again.")
    return 1 if not_graded else 0


# --- grades ----------------------------------------------------------------------------------

def _error_summary(paths: list[Path]) -> str:
    """Which cells of the autograded notebooks raised what ('SyntaxError in ex1_answer; ...')."""
    found: dict[str, list[str]] = {}
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells, 1):
            if cell.cell_type != "code" or RAISES & set(cell.metadata.get("tags", [])):
                continue
            names = [o.get("ename", "Error") for o in cell.outputs if o.output_type == "error"]
            if "CellTimeoutError" in names:
                names = ["cell timed out (infinite loop?)"]
            label = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {i}"
            for name in dict.fromkeys(names):
                found.setdefault(name, []).append(label)
    return "; ".join(f"{name} in {', '.join(labels)}" for name, labels in found.items())


def _declared_points(assignment: str) -> float:
    total = 0.0
    for path in (ROOT / "notebooks" / assignment).glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            total += float(meta.get("points", 0) or 0) if meta.get("grade") else 0.0
    return total


def grade_rows(assignment: str) -> list[dict[str, object]]:
    """One row per submission of an assignment: gradebook score, or why there is none."""
    problems, _ = find_problems(ROOT, assignment)
    report_path = REPORTS / f"autograde-{assignment}.json"
    failed = json.loads(report_path.read_text())["failed"] if report_path.exists() else {}
    submitted = {p.parent.name for p in ROOT.glob(f"submitted/*/{assignment}") if p.is_dir()}
    scores: dict[str, tuple[float, bool]] = {}
    max_score = None
    if (ROOT / "gradebook.db").exists():
        from nbgrader.api import Gradebook, MissingEntry

        os.environ["PATH"] = _env()["PATH"]
        course_id, db_url = _config()
        with Gradebook(db_url, course_id) as gb:
            try:
                max_score = gb.find_assignment(assignment).max_score
                for sub in gb.assignment_submissions(assignment):
                    scores[sub.student_id] = (sub.score, sub.needs_manual_grade)
            except MissingEntry:
                pass
    if max_score is None:
        max_score = _declared_points(assignment)
    rows: list[dict[str, object]] = []
    for student in sorted(submitted | set(scores)):
        row: dict[str, object] = dict.fromkeys(FIELDS, "")
        row.update(student=student, assignment=assignment, max_score=round(max_score, 2))
        autograded = sorted((ROOT / "autograded" / student / assignment).glob("*.ipynb"))
        if student in problems:
            row.update(status="damaged, not graded", notes="; ".join(problems[student]))
        elif autograded and student in scores:
            score, manual = scores[student]
            row.update(score=round(score, 2), needs_manual_grade="yes" if manual else "no", status="graded",
                       notes=_error_summary(autograded))
        elif student in failed:
            row.update(status="autograde failed", notes=failed[student])
        elif student in submitted:
            row.update(status="not graded yet", notes="run make autograde")
        else:
            row.update(status="no submission in submitted/", notes="stale gradebook entry")
        rows.append(row)
    return rows


def print_rows(rows: list[dict[str, object]]) -> None:
    """A short table of rows on stdout."""
    for r in rows:
        score = f"{r['score']}/{r['max_score']}" if r["score"] != "" else f"-/{r['max_score']}"
        manual = " (written answers still to grade)" if r["needs_manual_grade"] == "yes" else ""
        notes = f"  [{r['notes']}]" if r["notes"] else ""
        print(f"  {r['student']:<20} {score:>11}  {r['status']}{manual}{notes}")


def grades(assignments: list[str], out: Path) -> int:
    """Write the grades CSV (one row per submission) and print it as a table."""
    assignments = assignments or sorted(set(submitted_assignments(ROOT))
                                        | {p.name for p in (ROOT / "autograded").glob("*/*") if p.is_dir()})
    rows = [row for a in assignments for row in grade_rows(a)]
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    for a in assignments:
        print(a)
        print_rows([r for r in rows if r["assignment"] == a])
    print(f"{len(rows)} row(s) written to {out}")
    return 0


# --- feedback --------------------------------------------------------------------------------

def feedback(assignments: list[str]) -> int:
    """Write feedback/<student>/<a>/<notebook>.html for every autograded submission."""
    assignments = assignments or sorted({p.name for p in (ROOT / "autograded").glob("*/*") if p.is_dir()})
    if not assignments:
        print("nothing autograded yet: run make autograde first")
        return 0
    rc, text = nbgrader(["generate_feedback", f"--assignment={_pattern(assignments)}", "--force"],
                        log=REPORTS / "feedback.log")
    failed = _failures(text)
    for a in assignments:
        files = sorted((ROOT / "feedback").glob(f"*/{a}/*.html"))
        manual = [str(r["student"]) for r in grade_rows(a) if r["needs_manual_grade"] == "yes"]
        print(f"{a}: {len(files)} feedback file(s) in feedback/<student>/{a}/")
        if manual:
            print(f"  written answers not graded yet (their feedback shows 0 for them): {', '.join(manual)}")
    for student, reason in failed.items():
        print(f"  no feedback for {student}: {reason}")
    shown = os.environ.get("COURSE_FEEDBACK_SHOW_HIDDEN", "") in {"1", "true", "yes"}
    print("hidden tests are SHOWN in this feedback" if shown else "hidden tests are hidden in the feedback")
    return rc


def main(argv: list[str]) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("release").add_argument("assignments", nargs="*")
    sub.add_parser("collect").add_argument("source", type=Path)
    sub.add_parser("zip-collect").add_argument("assignments", nargs="*")
    p = sub.add_parser("autograde")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--timeout", type=int, default=None, help="per-cell limit in seconds (default: config)")
    p.add_argument("--student", action="append", help="grade only this student (repeatable)")
    p.add_argument("--no-precheck", dest="precheck", action="store_false",
                   help="do not set damaged submissions aside (tests the fallback)")
    p = sub.add_parser("grades")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--out", type=Path, default=ROOT / "grades.csv")
    sub.add_parser("feedback").add_argument("assignments", nargs="*")
    args = parser.parse_args(argv)
    if args.command == "release":
        return release(args.assignments)
    if args.command == "collect":
        return collect(args.source)
    if args.command == "zip-collect":
        return zip_collect(args.assignments)
    if args.command == "autograde":
        return autograde(args.assignments, args.timeout, args.student, args.precheck)
    if args.command == "grades":
        return grades(args.assignments, args.out)
    return feedback(args.assignments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make autograde`: pre-check, then grade every sound submission in ONE nbgrader run.

For every selected assignment the pre-check (tools/check_submissions.py) sets damaged submissions
aside. The sound ones, of all assignments together, are copied into a temporary ``submitted/``
folder and graded by a single ``nbgrader autograde`` call (each call costs seconds of start-up,
so one call per assignment adds up over 20 lessons), in the smoke profile. If nbgrader still stops
on one submission, that one is recorded as failed and the others are graded again.

The submissions run the lessons, and lessons save their results (``cu.save``): here they go to a
temporary folder (``COURSE_RESULTS_DIR``) that is deleted afterwards, so a student's smoke run
never lands in the course's ``results/``.

The log (``autograde.log``) and the failures per assignment (``autograde-<a>.json``, read by
``make grades``) are kept in autograded/.logs/.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

from tools.check_submissions import find_problems, submitted_assignments
from tools.grades import grade_rows, print_rows
from tools.nbgrader_run import REPORTS, ROOT, nbgrader, pattern, restored_cells, without_restored

MAX_RESTARTS = 5  # how often autograde restarts after nbgrader stopped on one submission
Submission = tuple[str, str]  # (student, assignment)


def _records(text: str) -> list[str]:
    """nbgrader's log split into records (a record starts with '[')."""
    records: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return records


def failures(text: str) -> dict[Submission, str]:
    """Submissions nbgrader reported as failed, each with the last line of its traceback."""
    failed: dict[Submission, str] = {}
    records = _records(text)
    for i, record in enumerate(records):
        m = re.search(r"There was an error processing assignment: .*[/\\]([^/\\]+)[/\\]([^/\\]+)$", record)
        if m:
            trace = records[i + 1] if i + 1 < len(records) else ""
            lines = [line.strip() for line in trace.splitlines() if line.strip()]
            failed[(m.group(1), m.group(2))] = lines[-1] if lines else "nbgrader error (see the log)"
    summary = r"There was an error processing assignment '([^']*)' for student '([^']*)'"
    for assignment, student in re.findall(summary, text):
        failed.setdefault((student, assignment), "nbgrader error (see the log)")
    return failed


def last_submission(text: str) -> Submission | None:
    """The (student, assignment) nbgrader was working on last (to name the one that stopped a run)."""
    found = re.findall(r"(?:submitted|autograded)[/\\]([^/\\\s]+)[/\\]([^/\\\s'\"]+)[/\\]", text)
    return found[-1] if found else None


def _progress(line: str) -> str | None:
    m = re.search(r"Autograding .*[/\\]autograded[/\\]([^/\\]+)[/\\]([^/\\]+)[/\\]", line)
    if m:
        return f"  grading {m.group(2)} {m.group(1)}"
    if "Timeout waiting for execute reply" in line:
        return "    a cell ran out of time and was interrupted"
    return None


def _graded(submission: Submission) -> bool:
    student, assignment = submission
    return any((ROOT / "autograded" / student / assignment).glob("*.ipynb"))


def _stage(submissions: list[Submission], staging: Path) -> None:
    """Copy exactly these submissions into a fresh ``staging/<student>/<assignment>/``."""
    shutil.rmtree(staging, ignore_errors=True)
    for student, assignment in submissions:
        shutil.copytree(ROOT / "submitted" / student / assignment, staging / student / assignment)


def restored_line(count: int) -> str:
    """The one line a run prints instead of nbgrader's "checksum has changed" note per restored cell."""
    return (f"{count} hidden-test cell(s) restored from the release (nbgrader's 'checksum has changed' notes, "
            "expected; left out of the log)")


def grade(pending: list[Submission], timeout: int | None, work: Path) -> dict[Submission, str]:
    """Grade the pending submissions in one nbgrader run (more only if it stops); return the failed.

    Prints once how many locked (hidden-test) cells nbgrader restored, instead of its note per cell.
    """
    staging, results = work / "submitted", work / "results"
    failed: dict[Submission, str] = {}
    restored = 0
    for _ in range(MAX_RESTARTS + 1):
        if not pending:
            break
        _stage(pending, staging)
        args = ["autograde", f"--assignment={pattern(sorted({a for _, a in pending}))}",
                f"--CourseDirectory.submitted_directory={staging}"]
        if timeout:
            args.append(f"--Execute.timeout={timeout}")
        rc, text = nbgrader(args, log=REPORTS / "autograde.log", echo=_progress, COURSE_PROFILE="smoke",
                            COURSE_RESULTS_DIR=str(results))
        restored += restored_cells(text)
        failed.update({s: r for s, r in failures(text).items() if s in pending})
        left = [s for s in pending if not _graded(s) and s not in failed]
        if not left or rc == 0:
            failed.update({s: "nbgrader did not grade it (see the log)" for s in left})
            break
        # nbgrader stopped the whole run on one submission: record it, grade the others again
        errors = [r.split("] ", 1)[-1].splitlines()[0] for r in _records(text) if "| ERROR]" in r]
        error = errors[-1] if errors else f"exit status {rc}"
        culprit = last_submission(text)
        if culprit not in left:  # not about one submission: give up on the rest
            failed.update({s: f"nbgrader stopped: {error}" for s in left})
            break
        failed[culprit] = f"nbgrader stopped on it: {error}"
        pending = [s for s in left if s != culprit]
    else:
        failed.update({s: "not graded: nbgrader stopped too often (see the log)" for s in pending})
    print(restored_line(restored))
    return failed


def autograde(assignments: list[str], timeout: int | None, only: list[str] | None = None,
              precheck: bool = True) -> int:
    """Register the assignments in the gradebook, grade them, print the results; 1 if any not graded.

    ``only`` grades just these students; ``precheck=False`` hands damaged submissions to nbgrader
    too (to exercise the fallback).
    """
    assignments = assignments or submitted_assignments(ROOT)
    if not assignments:
        print("nothing to grade: submitted/<student>/<assignment>/ is empty (make collect FROM=...)")
        return 0
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "autograde.log").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-autograde-") as tmp:
        # generate_assignment stores the graded cells (with hidden tests) in the gradebook; its
        # output goes to a temporary folder, so the committed notebooks/ are not touched.
        rc, text = nbgrader(["generate_assignment", f"--assignment={pattern(assignments)}", "--force",
                             f"--CourseDirectory.release_directory={Path(tmp) / 'release'}"],
                            log=REPORTS / "register.log")
        if rc:
            print(without_restored(text))
            return rc
        problems: dict[str, dict[str, list[str]]] = {}
        students: dict[str, list[str]] = {}
        pending: list[Submission] = []
        for a in assignments:
            everyone = sorted(p.parent.name for p in ROOT.glob(f"submitted/*/{a}") if p.is_dir())
            students[a] = [s for s in everyone if not only or s in only]
            found = find_problems(ROOT, a)[0] if precheck else {}
            problems[a] = {s: p for s, p in found.items() if s in students[a]}
            for s in students[a]:  # results are only ever those of the current submissions
                shutil.rmtree(ROOT / "autograded" / s / a, ignore_errors=True)
                if s in problems[a]:
                    shutil.rmtree(ROOT / "feedback" / s / a, ignore_errors=True)
            pending += [(s, a) for s in students[a] if s not in problems[a]]
            print(f"{a}: grading {len(students[a]) - len(problems[a])} submission(s) in the smoke profile; "
                  f"{len(problems[a])} damaged, set aside")
        failed = grade(pending, timeout, Path(tmp))
        saved = sorted((Path(tmp) / "results").glob("**/*.json"))
    print(f"results the notebooks saved ({len(saved)} file(s)) went to a temporary folder, now deleted; "
          "results/ is untouched")
    not_graded = 0
    for a in assignments:
        failed_here = {s: r for (s, aa), r in failed.items() if aa == a}
        for s in failed_here:
            shutil.rmtree(ROOT / "feedback" / s / a, ignore_errors=True)
        path = REPORTS / f"autograde-{a}.json"
        old = json.loads(path.read_text())["failed"] if path.exists() else {}
        kept = {s: r for s, r in old.items() if s not in students[a]}  # students not regraded this time
        damaged = {s: "; ".join(p) for s, p in problems[a].items()}
        path.write_text(json.dumps({"damaged": damaged, "failed": {**kept, **failed_here}}, indent=1))
        not_graded += len(damaged) + len(failed_here)
        print(a)
        print_rows(grade_rows(a))
    if not_graded:
        print(f"{not_graded} submission(s) NOT graded (listed above, with the reason); all others were. "
              "Fix them as INSTRUCTORS.md says and run make autograde again.")
    return 1 if not_graded else 0

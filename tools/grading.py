"""The instructor's grading workflow on nbgrader 0.9.6, as the Makefile runs it (see INSTRUCTORS.md).

    python tools/grading.py release                 notebooks/ from solutions/ (no gradebook touched)
    python tools/grading.py collect FOLDER          FOLDER/<student>/<assignment>/ -> submitted/
    python tools/grading.py zip-collect [A ...]     downloaded/<A>/archive/<student>__<nb>.ipynb -> submitted/
    python tools/grading.py autograde [A ...] [--timeout S] [--student S ...]
    python tools/grading.py autograde-slurm [A ...] [--per-task N] [--no-submit] [--wait]
    python tools/grading.py autograde-task MANIFEST INDEX    (one SLURM array task)
    python tools/grading.py grades [A ...] [--out grades.csv]
    python tools/grading.py feedback [A ...]

Without assignments, every assignment with submissions is processed. ``autograde``
(tools/autograding.py) sets damaged submissions aside and grades all the others in one nbgrader
call, in the smoke profile, with the results the lessons save sent to a temporary folder; if
nbgrader still stops on one submission it records that one as failed and grades the rest. Its log
and the failures are kept in autograded/.logs/ for ``grades`` (tools/grades.py), which merges the
exported rows into grades.csv by (student, assignment) and never drops the other rows.
"""

from __future__ import annotations

import argparse
import io
import ntpath
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.autograding import autograde, failures, last_submission  # noqa: E402
from tools.grades import grade_rows, grades, merge_rows, read_grades  # noqa: E402
from tools.nbgrader_run import REPORTS, lessons, nbgrader, pattern  # noqa: E402
from tools.slurm import autograde_slurm, autograde_task, merge_batch  # noqa: E402

__all__ = ["autograde", "collect", "failures", "feedback", "grade_rows", "grades", "last_submission",
           "main", "merge_rows", "read_grades", "release", "zip_collect"]

STUDENT_ID = re.compile(r"[A-Za-z0-9_.@+-]+")


# --- release -----------------------------------------------------------------------------------

def release(assignments: list[str]) -> int:
    """Regenerate notebooks/<a>/ from solutions/<a>/ (deterministic; the gradebook is not touched)."""
    assignments = assignments or lessons()
    if not assignments:
        print("no lessons in solutions/ yet: nothing to release")
        return 0
    rc, text = nbgrader(["generate_assignment", f"--assignment={pattern(assignments)}", "--force", "--no-db"])
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


CHECKED_ARCHIVE = ".archive-checked"  # downloaded/<a>/<this>: the archive without unsafe members


def unsafe_member(name: str) -> bool:
    """Whether a zip member would be extracted outside its folder (the members setuptools refuses)."""
    return (name.startswith("/") or "\\" in name or bool(ntpath.splitdrive(name)[0])
            or ".." in name.split("/"))


def clean_zip(source: Path | io.BytesIO, label: str) -> tuple[bytes | None, list[str]]:
    """(the zip rewritten without its unsafe members, or None when it has none; each skipped one, named).

    Zips inside the zip are cleaned too: nbgrader extracts them as well.
    """
    kept, skipped = [], []
    with zipfile.ZipFile(source) as zf:
        for info in zf.infolist():
            if unsafe_member(info.filename):
                skipped.append(f"{info.filename!r} in {label}")
                continue
            data = zf.read(info)
            if info.filename.endswith(".zip"):
                try:
                    inner, bad = clean_zip(io.BytesIO(data), f"{label}/{info.filename}")
                except zipfile.BadZipFile:  # nbgrader reports it as it always did
                    inner, bad = None, []
                data = inner if inner is not None else data
                skipped += bad
            kept.append((info, data))
    if not skipped:
        return None, []
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info, data in kept:
            zf.writestr(info, data)
    return out.getvalue(), skipped


def checked_archive(assignment: str) -> list[str]:
    """Copy downloaded/<a>/archive/ to CHECKED_ARCHIVE beside it, minus unsafe zip members; name them.

    Nothing is copied (and [] returned) when no zip has an unsafe member. nbgrader's extraction
    stops at the first unsafe member with an exception, which would leave every sound submission
    of the download uncollected.
    """
    archive = ROOT / "downloaded" / assignment / "archive"
    cleaned, skipped = dict[Path, bytes](), list[str]()
    for path in sorted(archive.rglob("*.zip")):
        try:
            data, bad = clean_zip(path, str(path.relative_to(ROOT)))
        except zipfile.BadZipFile:
            continue
        if data is not None:
            cleaned[path.relative_to(archive)], skipped = data, skipped + bad
    if cleaned:
        checked = archive.parent / CHECKED_ARCHIVE
        shutil.rmtree(checked, ignore_errors=True)
        shutil.copytree(archive, checked)
        for rel, data in cleaned.items():
            (checked / rel).write_bytes(data)
    return skipped


def collected_count(log: str) -> int | None:
    """How many files nbgrader's zip_collect says it collected (None: it does not say)."""
    found = re.search(r"(\d+) files collected", log)
    if found:
        return int(found.group(1))
    return 0 if "No files found in directory" in log else None


def zip_collect(assignments: list[str]) -> int:
    """Import LMS downloads: downloaded/<a>/archive/<student>__<notebook>.ipynb (or .zip of them).

    A zip member whose name would be extracted outside the folder (``../x__a.ipynb``, ``/abs``)
    is skipped with a message naming it, and the rest is collected. Exit status: nbgrader's, or 1
    when members were skipped and nothing at all could be collected for an assignment.
    """
    found = sorted(p.parent.name for p in ROOT.glob("downloaded/*/archive") if p.is_dir())
    assignments = assignments or found
    if not assignments:
        print("nothing in downloaded/<assignment>/archive/ (see INSTRUCTORS.md, 'From an LMS zip')")
        return 1
    status = 0
    for a in assignments:
        skipped = checked_archive(a)
        for member in skipped:
            print(f"skipped unsafe zip member {member}: its name points outside the folder "
                  "(ask the student to resubmit)")
        extra = [f"--ZipCollectApp.archive_directory={CHECKED_ARCHIVE}"] if skipped else []
        try:
            rc, text = nbgrader(["zip_collect", a, "--force", *extra], log=REPORTS / f"zip-collect-{a}.log",
                                echo=lambda line: line.rstrip() if "WARNING" in line or "files collected" in line
                                or "ERROR" in line else None)
        finally:
            shutil.rmtree(ROOT / "downloaded" / a / CHECKED_ARCHIVE, ignore_errors=True)
        if skipped and not rc and collected_count(text) == 0:
            print(f"{a}: nothing could be collected (every submission found was unsafe)")
            rc = 1
        status |= rc
    print("next: make check-submissions")
    return status


# --- feedback --------------------------------------------------------------------------------

def feedback(assignments: list[str]) -> int:
    """Write feedback/<student>/<a>/<notebook>.html for every autograded submission."""
    assignments = assignments or sorted({p.name for p in (ROOT / "autograded").glob("*/*") if p.is_dir()})
    if not assignments:
        print("nothing autograded yet: run make autograde first")
        return 0
    current = {"at": "?"}

    def echo(line: str) -> str | None:  # name each submission whose feedback lost an output
        where = re.search(r"Converting notebook .*[/\\]([^/\\]+)[/\\]([^/\\]+)[/\\][^/\\]+\.ipynb", line)
        if where:
            current["at"] = f"{where.group(1)}/{where.group(2)}"
        found = re.search(r"withheld (\d+) output\(s\) holding hidden-test text: (.*)", line)
        return f"  {current['at']}: withheld {found.group(1)} output(s) holding hidden-test text ({found.group(2)})" \
            if found else None

    rc, text = nbgrader(["generate_feedback", f"--assignment={pattern(assignments)}", "--force"],
                        log=REPORTS / "feedback.log", echo=echo)
    failed = failures(text)
    for a in assignments:
        files = sorted((ROOT / "feedback").glob(f"*/{a}/*.html"))
        manual = [str(r["student"]) for r in grade_rows(a) if r["needs_manual_grade"] == "yes"]
        print(f"{a}: {len(files)} feedback file(s) in feedback/<student>/{a}/")
        if manual:
            print(f"  written answers not graded yet (their feedback shows 0 for them): {', '.join(manual)}")
    for (student, a), reason in failed.items():
        print(f"  no feedback for {student}/{a}: {reason}")
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
    p.add_argument("--jobs", type=int, default=None, help="submissions run at once (default: one per CPU)")
    p.add_argument("--unsafe", action="store_true",
                   help="without bubblewrap, run submissions with your own rights instead of refusing")
    p = sub.add_parser("grades")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--out", type=Path, default=ROOT / "grades.csv",
                   help="CSV to merge into by (student, assignment); other rows are kept (default grades.csv)")
    sub.add_parser("feedback").add_argument("assignments", nargs="*")
    p = sub.add_parser("autograde-slurm", help="write (and submit) a SLURM array that runs the submissions")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--timeout", type=int, default=None, help="per-cell limit in seconds (default: config)")
    p.add_argument("--student", action="append", help="only this student (repeatable)")
    p.add_argument("--per-task", type=int, default=1, help="submissions per array task (default 1)")
    p.add_argument("--no-submit", dest="submit", action="store_false", help="only write the script")
    p.add_argument("--wait", action="store_true", help="sbatch --wait: return when every task has ended")
    p.add_argument("--sbatch-args", default="", help='extra #SBATCH lines, e.g. "--partition=short --time=30"')
    p.add_argument("--unsafe", action="store_true", help="allow tasks without bubblewrap")
    p = sub.add_parser("autograde-task", help="one array task (the sbatch script runs it)")
    p.add_argument("manifest", type=Path)
    p.add_argument("index", type=int)
    args = parser.parse_args(argv)
    if args.command == "release":
        return release(args.assignments)
    if args.command == "collect":
        return collect(args.source)
    if args.command == "zip-collect":
        return zip_collect(args.assignments)
    if args.command == "autograde":
        return autograde(args.assignments, args.timeout, args.student, args.precheck, args.jobs, args.unsafe)
    if args.command == "autograde-slurm":
        return autograde_slurm(args.assignments, args.timeout, args.student, args.per_task, args.submit,
                               args.unsafe, args.sbatch_args, args.wait)
    if args.command == "autograde-task":
        return autograde_task(args.manifest, args.index)
    if args.command == "grades":
        merge_batch()  # runs a SLURM array finished since the last export
        return grades(args.assignments, args.out)
    return feedback(args.assignments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make grades`: one row per submission, from the gradebook, merged into grades.csv.

An export never drops rows: the rows of the exported assignments replace those of the same
(student, assignment) in the existing file, and every other row of the file is kept. So
``make grades A=04_mixed_precision`` updates 04's rows and leaves the other assignments' rows as
they were. A row of an exported assignment whose student has neither a submission nor a gradebook
entry any more is kept too, and listed, so that nothing disappears silently.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import nbformat

from tools.check_submissions import find_problems, submitted_assignments
from tools.nbgrader_run import REPORTS, ROOT, course_config, nbgrader_env

FIELDS = ["student", "assignment", "score", "max_score", "needs_manual_grade", "status", "notes"]
RAISES = {"raises-exception", "nbval-raises-exception"}


def error_summary(paths: list[Path]) -> str:
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

        os.environ["PATH"] = nbgrader_env()["PATH"]
        course_id, db_url = course_config()
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
                       notes=error_summary(autograded))
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


def read_grades(path: Path) -> list[dict[str, str]]:
    """The rows of an existing grades CSV ([] when there is none).

    Raises:
        ValueError: the file is not a grades CSV (no ``student`` and ``assignment`` columns).
    """
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not {"student", "assignment"} <= set(reader.fieldnames or []):
            raise ValueError(f"{path} is not a grades file (its columns are {reader.fieldnames}); "
                             "move it away or write elsewhere with --out")
        return [{k: v or "" for k, v in row.items() if k in FIELDS} for row in reader]


def merge_rows(old: list[dict[str, str]], new: list[dict[str, object]]) -> tuple[list[dict[str, object]],
                                                                                   list[dict[str, str]]]:
    """Rows of ``new`` replace those of ``old`` with the same (student, assignment); the rest are kept.

    Returns:
        (all rows sorted by assignment and student, the old rows kept).
    """
    keys = {(str(r["student"]), str(r["assignment"])) for r in new}
    kept = [r for r in old if (r["student"], r["assignment"]) not in keys]
    rows: list[dict[str, object]] = [*new, *kept]
    rows.sort(key=lambda r: (str(r["assignment"]), str(r["student"])))
    return rows, kept


def grades(assignments: list[str], out: Path) -> int:
    """Merge the exported assignments' rows into the grades CSV; print them as a table."""
    assignments = assignments or sorted(set(submitted_assignments(ROOT))
                                        | {p.name for p in (ROOT / "autograded").glob("*/*") if p.is_dir()})
    try:
        old = read_grades(out)
    except ValueError as e:
        print(f"not written: {e}")
        return 1
    new = [row for a in assignments for row in grade_rows(a)]
    rows, kept = merge_rows(old, new)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(out)  # an interrupted export leaves the earlier file whole
    for a in assignments:
        print(a)
        print_rows([r for r in new if r["assignment"] == a])
    print(f"{len(new)} row(s) of {', '.join(assignments) or 'no assignment'} merged into {out} "
          f"(by student and assignment; {len(rows)} row(s) in all)")
    others = sorted({r["assignment"] for r in kept if r["assignment"] not in assignments})
    if others:
        print(f"kept {sum(r['assignment'] in others for r in kept)} row(s) of other assignments "
              f"from the existing file: {', '.join(others)}")
    stale = [r for r in kept if r["assignment"] in assignments]
    for r in stale:
        print(f"kept the earlier row of {r['student']}/{r['assignment']}: no submission or gradebook entry "
              "now (delete the row by hand if it is gone for good)")
    return 0

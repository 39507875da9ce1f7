"""Pre-grade check: name every damaged submission in submitted/ and say what is wrong with it.

    python tools/check_submissions.py [ASSIGNMENT ...]      (make check-submissions [A=...])

Each submission ``submitted/<student>/<assignment>/`` is compared with the release the students
got (``notebooks/<assignment>/``). nbgrader grades damaged submissions silently wrong (0 points)
or stops the whole run (a duplicated cell), so ``make autograde`` sets them aside and lists them.
Damage found, and the fix INSTRUCTORS.md gives for it:

* renamed or missing notebook (``Copy of 01_x.ipynb``)      -> rename the file;
* invalid JSON / not a notebook (truncated download)        -> ask for the file again;
* nbgrader metadata stripped (all cells, or some cells)     -> graft the answers into a fresh copy;
* graded cell deleted                                        -> graft the answers into a fresh copy;
* graded cell duplicated (copy/paste)                        -> delete the extra copy;
* cell metadata from another nbgrader version or cell type   -> graft the answers into a fresh copy.

Edited test cells are not damage: autograding restores them from the gradebook. They are listed
as notes. Exit status: 1 if any submission is damaged, else 0.
"""

from __future__ import annotations

import collections
import json
import sys
import warnings
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def release_cells(path: Path) -> dict[str, dict]:
    """The release notebook's nbgrader cells by grade id."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {_nbgrader(c)["grade_id"]: c for c in nb["cells"] if _nbgrader(c).get("grade_id")}


def check_notebook(path: Path, expected: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Problems (damage) and notes (harmless changes) of one submitted notebook."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return [f"{path.name}: invalid JSON ({e}); the file is damaged, ask for it again"], []
    try:
        with warnings.catch_warnings():  # e.g. duplicate cell ids: reported below, in our words
            warnings.simplefilter("ignore")
            nbformat.reads(json.dumps(nb), as_version=4)
        cells = list(nb["cells"])
        if not all(isinstance(c, dict) and "cell_type" in c and "source" in c for c in cells):
            raise ValueError("its cells are not notebook cells")
    except Exception as e:  # nbformat raises several types for files that are JSON but not notebooks
        return [f"{path.name}: not a Jupyter notebook ({type(e).__name__}: {e})"], []
    problems: list[str] = []
    notes: list[str] = []
    ids = collections.Counter[str](_nbgrader(c)["grade_id"] for c in cells if _nbgrader(c).get("grade_id"))
    if expected and not cells:
        return [f"{path.name}: the notebook is empty; ask the student for the file"], []
    if expected and not ids:
        return [f"{path.name}: nbgrader metadata stripped from every cell "
                "(saved by a tool that drops cell metadata); graft the answers into a fresh copy"], []
    plain = {_source(c) for c in cells if not _nbgrader(c)}
    for grade_id, cell in expected.items():
        if grade_id in ids:
            continue
        how = "metadata stripped" if _source(cell) in plain else "deleted"
        problems.append(f"{path.name}: graded cell '{grade_id}' {how}; graft the answers into a fresh copy")
    for grade_id, n in sorted(ids.items()):
        if n > 1:
            problems.append(f"{path.name}: graded cell '{grade_id}' duplicated ({n} copies); "
                            "delete the extra")
    for cell in cells:
        meta = _nbgrader(cell)
        release = expected.get(meta.get("grade_id", ""))
        if not release:
            continue
        if meta.get("schema_version") != 3:
            problems.append(f"{path.name}: cell '{meta['grade_id']}' has nbgrader metadata schema "
                            f"{meta.get('schema_version')} (expected 3); graft the answers into a fresh copy")
        elif cell.get("cell_type") != release.get("cell_type"):
            problems.append(f"{path.name}: cell '{meta['grade_id']}' changed from {release.get('cell_type')} "
                            f"to {cell.get('cell_type')}; change it back")
        elif _nbgrader(release).get("locked") and _source(cell) != _source(release):
            notes.append(f"{path.name}: locked cell '{meta['grade_id']}' was edited (autograde restores it)")
    return problems, notes


def check_submission(folder: Path, release: Path) -> tuple[list[str], list[str]]:
    """Problems and notes of one ``submitted/<student>/<assignment>/`` folder."""
    expected = {p.name: p for p in sorted(release.glob("*.ipynb"))}
    found = sorted(p.name for p in folder.glob("*.ipynb"))
    problems: list[str] = []
    notes: list[str] = []
    for name, path in expected.items():
        if name not in found:
            others = [f for f in found if f not in expected]
            if others:
                problems.append(f"notebook renamed: found {others}, expected '{name}'; rename the file")
            else:
                problems.append(f"notebook '{name}' missing (folder has {found or 'no notebooks'})")
            continue
        p, n = check_notebook(folder / name, release_cells(path))
        problems += p
        notes += n
    return problems, notes


def find_problems(root: Path, assignment: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Problems and notes per student for one assignment (students with none are left out)."""
    release = root / "notebooks" / assignment
    problems: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for folder in sorted(root.glob(f"submitted/*/{assignment}")):
        if not folder.is_dir():
            continue
        p, n = check_submission(folder, release)
        if p:
            problems[folder.parent.name] = p
        if n:
            notes[folder.parent.name] = n
    return problems, notes


def submitted_assignments(root: Path) -> list[str]:
    """Assignments that have at least one submission folder."""
    return sorted({p.name for p in root.glob("submitted/*/*") if p.is_dir()})


def main(argv: list[str]) -> int:
    """Print one line per damaged submission; 1 if any, else 0."""
    root = ROOT
    assignments = argv or submitted_assignments(root)
    if not assignments:
        print("no submissions in submitted/<student>/<assignment>/ (make collect FROM=... first)")
        return 0
    damaged = 0
    for assignment in assignments:
        if not (root / "notebooks" / assignment).is_dir():
            print(f"{assignment}: unknown assignment (no notebooks/{assignment}/)")
            damaged += 1
            continue
        problems, notes = find_problems(root, assignment)
        total = sum(1 for p in root.glob(f"submitted/*/{assignment}") if p.is_dir())
        print(f"{assignment}: {total} submission(s), {len(problems)} damaged")
        for student, lines in problems.items():
            for line in lines:
                print(f"  DAMAGED {student}/{assignment}: {line}")
        for student, lines in notes.items():
            for line in lines:
                print(f"  note    {student}/{assignment}: {line}")
        damaged += len(problems)
    if damaged:
        print(f"{damaged} damaged submission(s): fix them as INSTRUCTORS.md says, or they are not graded.")
    return 1 if damaged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

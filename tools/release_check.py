"""`make release-check`: the committed notebooks/ is what `make release` would write now.

    python tools/release_check.py [A ...]       (default: every lesson in solutions/)

The student notebooks are generated from solutions/ with nbgrader and the course's own
nbgrader_config.py (so ``StripRunMetadata`` too) into a temporary course, then compared as JSON with
the committed ones; every stale, missing or orphaned file is named and the exit status is 1. It takes
seconds: ``generate_assignment`` executes nothing. ``tests/test_grading.py`` compares its own
releases with the same :func:`differences`.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.nbgrader_run import lessons, nbgrader, pattern  # noqa: E402


def _same(a: Path, b: Path) -> bool:
    """Notebooks compared as JSON (key order and indentation aside), other files byte for byte."""
    if a.suffix == ".ipynb":
        return json.loads(a.read_text(encoding="utf-8")) == json.loads(b.read_text(encoding="utf-8"))
    return a.read_bytes() == b.read_bytes()


def differences(fresh: Path, committed: Path, assignments: list[str]) -> list[str]:
    """One line per file of ``committed/<a>/`` that differs from ``fresh/<a>/`` (a fresh release)."""
    problems = []
    for a in assignments:
        new = {p.relative_to(fresh / a): p for p in sorted((fresh / a).rglob("*")) if p.is_file()}
        old = {p.relative_to(committed / a): p for p in sorted((committed / a).rglob("*")) if p.is_file()}
        for name in sorted(new.keys() | old.keys()):
            shown = f"{committed.name}/{a}/{name}"
            if name not in old:
                problems.append(f"{shown} is missing: run make release A={a}")
            elif name not in new:
                problems.append(f"{shown} is not in a fresh release (no source in solutions/{a}/): remove it")
            elif not _same(new[name], old[name]):
                problems.append(f"{shown} is stale: run make release A={a}")
    return problems


def orphans(committed: Path, assignments: list[str]) -> list[str]:
    """Lesson folders of ``committed`` that no lesson in solutions/ releases."""
    return [f"{committed.name}/{d.name}/ has no lesson in solutions/: remove it"
            for d in sorted(committed.glob("[0-9]*")) if d.is_dir() and d.name not in assignments]


def generate(assignments: list[str], course: Path) -> Path:
    """Release ``assignments`` into the temporary ``course``; return its notebooks/ folder."""
    shutil.copy(ROOT / "nbgrader_config.py", course / "nbgrader_config.py")
    (course / "tools").symlink_to(ROOT / "tools", target_is_directory=True)  # the config's preprocessors
    for a in assignments:
        shutil.copytree(ROOT / "solutions" / a, course / "solutions" / a)
    rc, text = nbgrader(["generate_assignment", f"--assignment={pattern(assignments)}", "--force", "--no-db"],
                        cwd=course)
    if rc:
        raise RuntimeError(f"nbgrader generate_assignment failed ({rc}):\n{text}")
    return course / "notebooks"


def main(argv: list[str] | None = None) -> int:
    """Generate, compare, and print what differs; 0 when notebooks/ is up to date."""
    wanted = list(sys.argv[1:] if argv is None else argv)
    every = lessons()
    assignments = wanted or every
    unknown = sorted(set(assignments) - set(every))
    if unknown:
        print(f"no such lesson in solutions/: {', '.join(unknown)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="release-check-") as tmp:
        fresh = generate(assignments, Path(tmp))
        problems = differences(fresh, ROOT / "notebooks", assignments)
    if not wanted:
        problems += orphans(ROOT / "notebooks", every)
    for line in problems:
        print(line)
    print(f"release check: {len(assignments)} lessons, "
          + (f"{len(problems)} files differ from a fresh release" if problems else "notebooks/ is up to date"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

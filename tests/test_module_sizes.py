"""Must hold: every module of course_utils/ and tools/ stays under 300 lines (course_utils/README.md's rule).

A module that grows past it is split along a line of concern (what it is about), not cut at a
line number: see how ``data/`` holds ``dataset``, ``datasets``, ``cifar10`` and ``loaders``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("course_utils", "tools")
LIMIT = 300
#: Modules allowed at or over the limit for now, each with why; a test fails once one is back under it.
EXCEPTIONS: dict[str, str] = {}


def line_count(path: Path) -> int:
    """Lines in a text file, as an editor numbers them."""
    return len(path.read_text(encoding="utf-8").splitlines())


def too_long(root: Path, folders: tuple[str, ...] = FOLDERS, limit: int = LIMIT,
             allowed: dict[str, str] | None = None) -> list[str]:
    """``"path: N lines"`` for every ``.py`` under ``folders`` of ``root`` with ``limit`` lines or more."""
    allowed = EXCEPTIONS if allowed is None else allowed
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            n = line_count(path)
            if n >= limit and rel not in allowed:
                found.append(f"{rel}: {n} lines")
    return found


def test_every_module_is_under_300_lines():
    long = too_long(ROOT)
    assert not long, (f"modules of {LIMIT} lines or more; split each along a line of concern and update every "
                      "reference (course_utils/README.md):\n" + "\n".join(long))


def test_there_are_modules_to_measure():
    assert len([p for f in FOLDERS for p in (ROOT / f).rglob("*.py")]) > 50


def test_the_size_check_can_fail(tmp_path):
    (tmp_path / "course_utils" / "sub").mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    (tmp_path / "course_utils" / "sub" / "long.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "course_utils" / "short.py").write_text("x = 1\n" * (LIMIT - 1))
    (tmp_path / "tools" / "tool.py").write_text("x = 1\n" * (LIMIT + 5))
    assert too_long(tmp_path, allowed={}) == ["course_utils/sub/long.py: 300 lines", "tools/tool.py: 305 lines"]
    assert too_long(tmp_path, allowed={"tools/tool.py": "being split"}) == ["course_utils/sub/long.py: 300 lines"]


def test_every_exception_is_still_needed():
    back = [rel for rel in EXCEPTIONS if not (ROOT / rel).exists() or line_count(ROOT / rel) < LIMIT]
    assert not back, f"under {LIMIT} lines now (or gone): remove them from EXCEPTIONS in this file: {back}"

"""What a reference run already has, and what its code is: resuming `make reference` across windows.

A GPU window is short (tools/gpu_window.sh), so the 20 lessons may take more than one. A lesson is
skipped when the machine's folder already holds it, saved by a run of the *same code* on the *same
machine* (``results/reference/<machine-id>/environment.json``: ``code_digest``, ``lessons``). The code is
identified by :func:`code_digest`, a hash of what decides a lesson's numbers (the library, the lessons,
the tools, the pins), not by the git commit: committing the first window's results changes the commit
but not the code, and the device's copy of the checkout has no ``.git`` anyway. The commit is recorded
too, for people: from ``.git``, else from ``COURSE_GIT_COMMIT`` (and ``COURSE_GIT_DIRTY``), which the
caller of a window passes in.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

#: What decides a lesson's numbers: its digest is the code's identity across windows.
CODE_GLOBS = ("course_utils/**/*.py", "solutions/*/*.ipynb", "tools/*.py", "tools/*.sh", "pyproject.toml",
              "requirements-lock.txt", "nbgrader_config.py")


def code_digest(root: Path) -> str:
    """sha256 of the files in :data:`CODE_GLOBS` (names and contents, in sorted order), 16 hex digits."""
    h = hashlib.sha256()
    files = sorted({p for pattern in CODE_GLOBS for p in root.glob(pattern) if p.is_file()})
    for p in files:
        if "__pycache__" in p.parts:
            continue
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _git(root: Path, *args: str) -> str | None:
    if shutil.which("git") is None or not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def commit(root: Path) -> dict:
    """``{"git_commit", "git_dirty", "commit_from"}``: from .git, else ``COURSE_GIT_COMMIT``, else unknown."""
    head = _git(root, "rev-parse", "HEAD")
    if head:
        dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
        return {"git_commit": head, "git_dirty": dirty, "commit_from": ".git"}
    given = os.environ.get("COURSE_GIT_COMMIT", "").strip()
    if given:
        dirty = os.environ.get("COURSE_GIT_DIRTY", "").strip() not in ("", "0")
        return {"git_commit": given, "git_dirty": dirty, "commit_from": "COURSE_GIT_COMMIT"}
    return {"git_commit": None, "git_dirty": None,
            "commit_from": "unknown: no .git here and COURSE_GIT_COMMIT unset (code_digest identifies the code)"}


def saved_lessons(root: Path, machine: str, digest: str, profile: str) -> dict[str, dict]:
    """The lessons ``root/<machine>/`` holds from a run of this code and profile: each entry of its
    ``environment.json`` that finished ok and whose files (relative to ``root``) are all still there."""
    env_file = root / machine / "environment.json"
    try:
        env = json.loads(env_file.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    if env.get("code_digest") != digest or env.get("profile") != profile:
        return {}
    return {e["lesson"]: e for e in env.get("lessons", [])
            if e.get("ok") and e.get("files") and all((root / f).is_file() for f in e["files"])}


def carry_over(entry: dict, source: Path, out: Path) -> None:
    """Copy a saved lesson's files from the results root ``source`` into ``out`` (the same relative paths)."""
    if source.resolve() == out.resolve():
        return
    for rel in entry["files"]:
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, dest)

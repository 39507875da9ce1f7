"""`make lock`: requirements-lock.txt from an environment, reproducibly.

    python tools/lock.py [--check] [--fresh] [--python PY]

The lock is ``pip freeze`` of the course environment (PY, default this interpreter: .venv's python
under make), without course_utils itself, sorted by lower-cased name, under the lock file's own comment
header. Install or upgrade a package in .venv (and add it to pyproject.toml's dependencies or ``dev``
extras), then ``make lock``. ``--fresh`` resolves pyproject.toml's dependencies and ``dev`` extras
from the registry in a throwaway venv (build/lock-venv; torch is large: minutes) and freezes that
instead. ``--check`` (``make lock CHECK=1``) writes nothing: it prints what would change and exits 1
when the lock is not what the environment holds.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-lock.txt"
FRESH_VENV = ROOT / "build" / "lock-venv"
OURS = {"course-utils", "course_utils"}


def header(text: str) -> list[str]:
    """The lock's leading comment lines (kept as they are)."""
    lines = text.splitlines()
    return lines[: next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))]


def pins(freeze: str) -> list[str]:
    """``name==version`` lines of a ``pip freeze`` output, course_utils and editable installs left out."""
    out = []
    for line in freeze.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "-e ")) or "==" not in line:
            continue
        if line.partition("==")[0].lower().replace("_", "-") in OURS:
            continue
        out.append(line)
    return sorted(out, key=str.lower)


def freeze(python: str) -> str:
    """``pip freeze`` of the environment of ``python``."""
    return subprocess.run([python, "-m", "pip", "freeze", "--disable-pip-version-check", "--exclude-editable"],
                          capture_output=True, text=True, check=True).stdout


def fresh_python() -> str:
    """A throwaway venv with pyproject.toml's dependencies and dev extras resolved from the registry."""
    shutil.rmtree(FRESH_VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(FRESH_VENV)], check=True)
    python = str(FRESH_VENV / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", f"{ROOT}[dev]"],
                   check=True)
    return python


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check compare) the lock; 0 when it is written or already matches."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the lock would change")
    parser.add_argument("--fresh", action="store_true", help="resolve from the registry in build/lock-venv")
    parser.add_argument("--python", default=sys.executable, help="the environment to freeze (default: this one)")
    args = parser.parse_args(argv)
    old = LOCK.read_text(encoding="utf-8")
    new = "\n".join([*header(old), *pins(freeze(fresh_python() if args.fresh else args.python))]) + "\n"
    if new == old:
        print(f"{LOCK.name} is up to date")
        return 0
    if args.check:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), LOCK.name, "make lock"))
        print(f"{LOCK.name} differs from the environment (above); `make lock` would write it")
        return 1
    LOCK.write_text(new, encoding="utf-8")
    print(f"{LOCK.name} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())

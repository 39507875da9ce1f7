"""What every grading step shares: the course paths, and running nbgrader from the course root."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "autograded" / ".logs"  # hidden from nbgrader, kept by make clean

#: nbgrader's note for every locked cell it restores from the release (OverwriteCells.report_change):
#: in autograde that is every hidden-test cell of every submission (the student's copy has none), so
#: it is expected and left out of the log and the output; :func:`restored_cells` counts it instead.
_log_lock = threading.Lock()  # workers append to logs from threads
RESTORED = re.compile(r"Attribute 'checksum' for cell \S+ has changed!")


def restored_cells(text: str) -> int:
    """How many "checksum has changed" notes (locked cells restored from the release) ``text`` holds."""
    return sum(1 for line in text.splitlines() if RESTORED.search(line))


def without_restored(text: str) -> str:
    """``text`` without nbgrader's "checksum has changed" lines (see :data:`RESTORED`)."""
    return "".join(line for line in text.splitlines(keepends=True) if not RESTORED.search(line))


def nbgrader_env(**extra: str) -> dict[str, str]:
    """Environment for nbgrader: the venv's bin on PATH (nbgrader runs `alembic` from it)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def nbgrader(args: list[str], *, log: Path | None = None, echo: Callable[[str], str | None] | None = None,
             cwd: Path = ROOT, cpus: list[int] | None = None, **env: str) -> tuple[int, str]:
    """Run ``python -m nbgrader ARGS`` in the course root; return (exit status, output).

    The output is appended to ``log``; ``echo`` maps an output line to what to print (or None);
    ``env`` adds environment variables (nbgrader's kernels inherit them); ``cwd`` is the course
    whose nbgrader_config.py applies; ``cpus`` pins nbgrader (and the kernels it starts) to those
    CPUs. nbgrader's expected "checksum has changed" notes are neither logged nor echoed; the returned output keeps them
    (count them with :func:`restored_cells`).
    """
    proc = subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=nbgrader_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if cpus and hasattr(os, "sched_setaffinity"):  # before nbgrader starts any kernel (seconds later)
        os.sched_setaffinity(proc.pid, cpus)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        shown = echo(line) if echo and not RESTORED.search(line) else None
        if shown:
            print(shown, flush=True)
    text = "".join(lines)
    rc = proc.wait()
    if "Exception while loading config file" in text:  # nbgrader would go on with its defaults
        print(text, file=sys.stderr)
        rc = rc or 1
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with _log_lock, log.open("a", encoding="utf-8") as fh:
            fh.write(f"$ nbgrader {' '.join(args)}\n{without_restored(text)}\n")
    return rc, text


def course_config() -> tuple[str, str]:
    """(course id, gradebook URL) from nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    course = cfg.CourseDirectory
    return course.course_id, course.get("db_url", f"sqlite:///{ROOT / 'gradebook.db'}")


def lessons() -> list[str]:
    """Assignments in solutions/."""
    return sorted(p.name for p in (ROOT / "solutions").glob("[0-9]*") if p.is_dir())


def pattern(assignments: list[str]) -> str:
    """nbgrader's assignment argument: the one assignment, or ``*`` for several."""
    return assignments[0] if len(assignments) == 1 else "*"

"""`make reference`, one lesson: a child process under a watchdog, and where the lesson's files go.

Each lesson runs in a child (``tools/make_reference.py --run-one``, :func:`run_one`) that writes the
executed notebook after every cell, so a killed lesson keeps every cell that finished. The
watchdog (:func:`run_with_limit`) kills the child, kernel included, at its limit. The lesson saves
into a staging folder; when it ends, :func:`keep` moves its results and executed notebook into
``<out>/<machine-id>/``, or into ``failed/`` beside them for a failed, killed or fallback lesson,
so it never replaces a good reference. Under ``--budget``, :func:`time_for` gives a lesson what is
left, or skips it when its estimate (tools/estimate_gpu.py, :func:`lesson_estimates`) does not fit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from tools.run_notebooks import run_notebook

#: What course_utils.data.datasets prints when it falls back to digits (a reference never keeps that lesson).
FALLBACK_MARK = "using the offline default dataset 'digits' instead"
GRACE_S = 1.0  # after SIGTERM, before SIGKILL (the child's notebook is already on disk)
MIN_LESSON_S = 15  # a lesson is not started with less than this left before --budget ends


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def run_with_limit(cmd: list[str], limit: float, env: dict[str, str] | None = None,
                   stdout: int | IO[str] | None = None) -> tuple[int | None, float]:
    """Run ``cmd``; at ``limit`` seconds kill it and everything it started (a Jupyter kernel runs in
    a session of its own, so a process-group kill would miss it). Return (exit code or None, seconds).

    The tree is read while the child still runs (an orphaned kernel would leave it), sent SIGTERM,
    and after :data:`GRACE_S` SIGKILL, whatever is left.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.STDOUT if stdout else None)
    try:
        return proc.wait(timeout=max(limit, 0.0)), time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        tree = [*reversed(_descendants(proc.pid)), proc.pid]
        _signal(tree, signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        _signal([*reversed(_descendants(proc.pid)), *tree], signal.SIGKILL)
        proc.wait()
        return None, time.perf_counter() - t0


def run_one(src: Path, build: Path, limit: int, result: Path) -> int:
    """Child process: execute one notebook (written after every cell) and write (ok, seconds, error) as JSON."""
    ok, seconds, error = run_notebook(src, build, timeout=limit, progressive=True)
    result.write_text(json.dumps({"ok": ok, "seconds": seconds, "error": error}))
    return 0


def fell_back(notebook: Path) -> bool:
    """Whether an executed notebook printed the digits fallback (then it is no reference)."""
    try:
        return FALLBACK_MARK in notebook.read_text(errors="replace")
    except OSError:
        return False


def note_killed(notebook: Path, message: str) -> None:
    """Append a markdown cell saying why the notebook stops where it does."""
    try:
        import nbformat

        nb = nbformat.read(notebook, as_version=4)
        nb.cells.append(nbformat.v4.new_markdown_cell(f"**make reference:** {message}"))
        nbformat.write(nb, notebook)
    except Exception:  # noqa: S110 - a damaged partial notebook stays as it is
        pass


def keep(staging: Path, out: Path, executed: Path, ok: bool, default: Path) -> list[str]:
    """Move a finished lesson's results from ``staging`` into ``out`` (``failed/`` beside them when not
    ``ok``), with its executed notebook; return the paths written, relative to ``out``."""
    written = []
    folders = set()
    for p in sorted(staging.rglob("*.json")) if staging.is_dir() else []:
        rel = p.relative_to(staging)
        dest = out / rel.parent / ("" if ok else "failed") / rel.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(p), dest)
        folders.add(dest.parent)
        written.append(str(dest.relative_to(out)))
    if executed.exists():
        folder = next(iter(folders)) if len(folders) == 1 else (default if ok else default / "failed")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(executed, folder / executed.name)
        written.append(str((folder / executed.name).relative_to(out)))
    return written


def lesson_estimates(notebooks: Sequence[Path], profile: str) -> dict[str, float]:
    """Each lesson's estimated seconds on an H100/H200 (tools/estimate_gpu.py) for the gpu profile; empty for
    another profile, or if it cannot say."""
    if profile != "gpu":
        return {}
    try:
        from tools.estimate_gpu import lesson_seconds

        return lesson_seconds([str(p) for p in notebooks])
    except Exception as e:  # an estimate only decides what to skip near the end of a budget
        print(f"make reference: no per-lesson estimates ({type(e).__name__}: {e}); --budget cuts at its end only")
        return {}


def time_for(lesson_timeout: int, deadline: float | None, estimate: float) -> tuple[float, str | None]:
    """A lesson's limit in seconds, and why it is skipped (None: it runs) when ``--budget`` has too little left."""
    left = deadline - time.perf_counter() if deadline is not None else float("inf")
    limit = min(float(lesson_timeout), left)
    if limit >= min(MIN_LESSON_S, lesson_timeout) and estimate <= left:
        return limit, None
    return limit, "skipped: out of time" + (f" (estimate {estimate:.0f} s, {left:.0f} s left)"
                                            if limit >= min(MIN_LESSON_S, lesson_timeout) else "")


def run_lesson(src: Path, *, child: list[str], build: Path, out: Path, folder: Path, limit: float,
               env: dict[str, str], scratch: Path) -> dict:
    """Run one lesson in ``child`` under the watchdog, then keep its files; return its entry in environment.json.

    ``folder`` is the machine's folder in ``out``; ``scratch`` a folder for the child's result file.
    A lesson that printed the digits fallback is kept aside like a failed one.
    """
    slug = src.parent.name
    result, staging = scratch / f"{slug}.json", build / slug / "results"
    shutil.rmtree(staging, ignore_errors=True)
    executed = build / slug / src.name
    executed.unlink(missing_ok=True)
    cmd = [*child, "--build", str(build), "--lesson-timeout", str(int(limit) + 1), "--run-one", str(src), str(result)]
    code, seconds = run_with_limit(cmd, limit, env={**env, "COURSE_RESULTS_DIR": str(staging)})
    if code is None:
        ok, error = False, f"killed at its {limit:.0f} s limit"
        note_killed(executed, f"this lesson was killed at its {limit:.0f} s limit; the cells above finished.")
    elif result.exists():
        done = json.loads(result.read_text())
        ok, error = done["ok"], re.sub(r"\x1b\[[0-9;]*m", "", done["error"])  # no ANSI colours
    else:
        ok, error = False, f"the runner exited with code {code}"
    if ok and fell_back(executed):
        ok, error = False, "fell back to the digits dataset: not a reference"
    files = keep(staging, out, executed, ok, folder)
    return {"lesson": slug, "ok": ok, "seconds": round(seconds, 1), "limit_seconds": round(limit, 1),
            "error": error or None, "files": files}

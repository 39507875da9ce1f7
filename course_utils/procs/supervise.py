"""Watching the processes a launch started: stream their output, wait for the first failure, stop the whole tree.

:func:`~course_utils.procs.launch.torchrun` and :func:`~course_utils.procs.slurm.slurm_locally` start
agents that start ranks; these helpers make sure no process outlives the call that started it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["descendants", "pump", "stop", "wait_all"]

_TEE_PREFIX = re.compile(r"^\[default\d+\]:")


def pump(stream: Any, sink: list[str], echo: bool) -> None:
    """Read ``stream`` line by line into ``sink`` until it closes, printing each line when ``echo``.

    The prefix torchrun's ``--tee`` puts before each rank's line is taken off.
    """
    for line in iter(stream.readline, ""):
        line = _TEE_PREFIX.sub("", line)  # what --tee puts before each rank's line
        sink.append(line)
        if echo:
            print(line, end="", flush=True)
    stream.close()


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``.

    torchrun starts each rank in a session of its own, so a process-group kill of the agent does
    not reach them.
    """
    try:
        import psutil

        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        pass
    except Exception:  # the process is gone
        return []
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def stop(p: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop an agent and its ranks.

    SIGTERM first (the agent then stops its own ranks), SIGKILL for whatever is left after
    ``grace`` seconds.
    """
    if p.poll() is not None:
        return
    below = descendants(p.pid)
    p.terminate()
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    for pid in [p.pid, *below]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    p.wait()


def wait_all(procs: list[subprocess.Popen], timeout: float) -> list[int] | None:
    """Wait for every agent; the first one to fail ends the wait.

    The others would hang in a collective with a missing peer. Returns the exit codes (the failed
    one non-zero), or None past ``timeout``.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        codes = [p.poll() for p in procs]
        if any(c for c in codes if c is not None) or all(c is not None for c in codes):
            return [c if c is not None else 0 for c in codes]
        time.sleep(0.05)
    return None

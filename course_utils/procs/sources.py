"""Source written to files for other processes: a module for ``cu.in_processes``, a job for ``torchrun``.

A fresh process cannot see a notebook's functions: it imports a file. :func:`module_from_source`
writes a source string to a module file, compiled first, so that a typo shows in the notebook with
its line rather than in a child's traceback. :func:`run_on_ranks` splices one function's source
into a job script, runs it on ``nproc`` ranks with :func:`~course_utils.procs.launch.torchrun` and
returns what each rank reported: how a test cell runs a learner's distributed function for real.
"""

from __future__ import annotations

import atexit
import inspect
import json
import keyword
import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .launch import torchrun

__all__ = ["SOURCE", "module_from_source", "run_on_ranks"]

#: Where :func:`run_on_ranks` puts the function's source in a job script.
SOURCE = "{source}"


def _remove_at_exit(folder: Path) -> None:
    """Remove ``folder`` when this process exits (not when a forked child of it does)."""
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)


def module_from_source(source: str, name: str = "module", *, folder: str | Path | None = None) -> Path:
    """Write ``source`` to ``<folder>/<name>.py`` and return its path.

    Args:
        source: the module's Python source; common leading indentation is removed, so a
            triple-quoted string may be indented with the code around it.
        name: the module's name, a Python identifier: with its folder on ``sys.path`` it imports
            as ``import <name>``.
        folder: where to write it; by default a new temporary folder, removed when this Python
            process exits.

    Returns:
        The file's path: ``cu.in_processes(f"{path}:function", ...)`` or ``cu.torchrun(path, ...)``
        run it in fresh processes.

    Raises:
        ValueError: ``name`` is not a module name (an identifier that is not a keyword).
        SyntaxError: the source does not compile; nothing is written.
    """
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"name must be a module name (a Python identifier, not a keyword), got {name!r}")
    text = textwrap.dedent(source).lstrip("\n")
    compile(text, f"{name}.py", "exec")  # a typo fails here, with its line, not in a child process
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix=f"course-{name}-"))
        _remove_at_exit(folder)
    path = Path(folder) / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_on_ranks(fn: Callable[..., Any], cases: Any, nproc: int, *, script: str,
                 timeout: float = 120.0) -> list[Any]:
    """Run a job script with ``fn``'s source in it on ``nproc`` ranks, and return each rank's report.

    The script is a template: :data:`SOURCE` (``{source}``) marks where ``fn``'s source goes, after
    the imports it needs. Each rank reads the cases from the JSON file named by ``sys.argv[1]``,
    runs them, and passes what it saw to :func:`~course_utils.procs.launch.report`. The source
    travels, not the object: a test cell runs a learner's function in real processes, with real
    collectives (``torchrun``, gloo on the CPU).

    Args:
        fn: the function the ranks run; its source must be readable (:func:`inspect.getsource`).
        cases: what the ranks run it on; anything JSON can write.
        nproc: the number of ranks, processes on this machine.
        script: the job's source, with ``{source}`` in it.
        timeout: seconds before every rank is stopped (a rank that waits for a collective another
            rank never joins waits forever).

    Returns:
        What each rank reported, in rank order.

    Raises:
        ValueError: ``script`` has no ``{source}``, or ``nproc`` is below 1.
        SyntaxError: the script with the source in it does not compile.
        RuntimeError: a rank failed or the job ran past ``timeout`` (:func:`~course_utils.procs.launch.torchrun`).
    """
    if SOURCE not in script:
        raise ValueError(f"script must mark where the function's source goes with {SOURCE}")
    if nproc < 1:
        raise ValueError(f"nproc must be at least 1, got {nproc}")
    source = textwrap.dedent(inspect.getsource(fn))
    with tempfile.TemporaryDirectory(prefix="course-job-") as tmp:
        path = module_from_source(script.replace(SOURCE, source), "rank_job", folder=tmp)
        cases_file = Path(tmp) / "cases.json"
        cases_file.write_text(json.dumps(cases), encoding="utf-8")
        job = torchrun(path, nproc_per_node=nproc, args=[str(cases_file)], stream=False, timeout=timeout)
    return list(job.ranks)

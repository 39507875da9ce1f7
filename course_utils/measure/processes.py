"""Arms that must not share a process, measured in fresh Python processes and returned as data.

Some settings are process-wide and remember what they saw: ``torch.backends.cudnn.benchmark``
keeps a per-shape cache of chosen kernels, ``torch.compile`` a cache of compiled graphs. Two arms
timed in one process would share them, so :func:`in_processes` starts a fresh interpreter for
every run of every arm, alternating the arms round by round (the baseline twice, as the A/A
control) in random Latin-square orders drawn afresh for every call (the seed is recorded), and
returns what each run's function returned. :meth:`ProcessRuns.compare`
turns one number per run into the engine's interleaved comparison, rounds being rounds of
processes. The target is a function in an importable module or a ``.py`` file (a notebook writes
one), called with keyword arguments that JSON can carry; it returns a dict of numbers or lists.

Importing torch takes a second or two of every fresh interpreter. ``preload=("torch",)`` forks
each run from a server process that imported torch once and did nothing else
(``course_utils.procs._forkserver``, like multiprocessing's forkserver without pickling or a re-import
of ``__main__``): no CUDA context, no cuDNN cache, no compiled graph exists in it, so every run
still starts with all of them empty; only the import is shared.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..progress import progress_bar
from . import forcing
from .analysis import analyze, range_only
from .comparison import Comparison
from .rounds import latin_orders
from .stats import min_rounds

__all__ = ["CONTROL", "ProcessRuns", "in_processes"]

#: The name of the baseline's second copy in every round.
CONTROL = "A/A control"
#: How a comparison of process runs was measured, for its printout.
PROCESS_METHOD = ("rounds of fresh processes (one per arm per round, random Latin-square orders; "
                  "the baseline twice)")


@dataclass
class ProcessRuns:
    """What :func:`in_processes` returned: per arm, one result dict per fresh process, in round order.

    ``results[arm][i]`` is what the target returned in round ``i``; ``wall_s[arm][i]`` the whole
    process's wall time (interpreter start and imports included); ``order`` the arms in the order
    they ran, round by round, from random Latin squares seeded by ``seed`` (pass it back to
    :func:`in_processes` to rerun the same orders). The baseline's second copy is under :data:`CONTROL`.
    """

    target: str
    arms: dict[str, dict[str, Any]]
    baseline: str
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    wall_s: dict[str, list[float]] = field(default_factory=dict)
    order: list[list[str]] = field(default_factory=list)
    preload: list[str] = field(default_factory=list)
    seed: int | None = None

    @property
    def rounds(self) -> int:
        """Rounds run (each arm once per round)."""
        return len(self.order)

    def values(self, arm: str, key: str) -> list[Any]:
        """The value ``key`` of every run of ``arm``, in round order.

        Raises:
            KeyError: an unknown arm, or a run that returned no ``key`` (its keys are listed).
        """
        if arm not in self.results:
            raise KeyError(f"no arm {arm!r}; the arms are {list(self.results)}")
        out = []
        for i, r in enumerate(self.results[arm]):
            if key not in r:
                raise KeyError(f"run {i} of {arm!r} returned no {key!r}; it returned {sorted(r)}")
            out.append(r[key])
        return out

    def compare(self, key: str, trick: str, *, level: float = 0.95, min_effect: float = 1.0) -> Comparison:
        """The baseline against ``trick`` on the time ``key`` (seconds, one per run), round by round.

        Each round's ratio is baseline / trick from processes of the same round, the A/A control
        the baseline's two copies: the engine's verdict, with rounds of processes for rounds of
        calls. Needs the control (``control=True``) and enough rounds for ``level``.
        """
        if CONTROL not in self.results:
            raise ValueError("compare needs the A/A control: run in_processes(..., control=True)")
        if self.rounds < min_rounds(level):
            return _too_few(self, key, trick, level)
        c = analyze(self.values(self.baseline, key), self.values(CONTROL, key), self.values(trick, key),
                    names=(self.baseline, trick), level=level, min_effect=min_effect,
                    device=str(self.results[self.baseline][0].get("device", "cpu")),
                    rounds_word="rounds of processes", more="Run more rounds (rounds=) for a narrower interval.")
        c.method = PROCESS_METHOD
        return forcing.apply(c)  # a test run's forced verdict (smoke profile only); c otherwise

    def to_dict(self) -> dict[str, Any]:
        """Return the runs as a JSON-serialisable dict (``kind`` = ``"process_runs"``)."""
        return {"kind": "process_runs", "target": self.target, "arms": self.arms, "baseline": self.baseline,
                "results": self.results, "wall_s": self.wall_s, "order": self.order, "preload": self.preload,
                "seed": self.seed}

    def __str__(self) -> str:
        seed = "" if self.seed is None else f", seed={self.seed}"
        lines = [f"{self.rounds} rounds of fresh processes running {self.target} "
                 f"(arm orders: random Latin squares{seed})"]
        start = (f"forked from a process that imported {', '.join(self.preload)}; the rest of its start included"
                 if self.preload else "interpreter start and imports included")
        for arm, walls in self.wall_s.items():
            walls = sorted(walls)
            lines.append(f"  {arm:<24} {len(walls)} processes, wall time per process median "
                         f"{walls[len(walls) // 2]:.2f} s ({start})")
        return "\n".join(lines)


def _too_few(runs: ProcessRuns, key: str, trick: str, level: float) -> Comparison:
    """A comparison over fewer rounds than an interval needs: the range of the ratios, no verdict."""
    n = runs.rounds
    c = range_only(*(runs.values(arm, key) for arm in (runs.baseline, CONTROL, trick)), names=(runs.baseline, trick),
                   rounds_word=f"round{'s' if n != 1 else ''} of processes", level=level, method=PROCESS_METHOD,
                   device=str(runs.results[runs.baseline][0].get("device", "cpu")))
    return forcing.apply(c)  # a test run's forced verdict (smoke profile only); c otherwise


def _order_seed(seed: int | None) -> int:
    """The seed of the arm orders: ``seed``, or a fresh one from the OS when None."""
    if seed is None:
        return secrets.randbits(32)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0 or None (a fresh one), got {seed!r}")
    return seed


def _run_one(target: str, kwargs: Mapping[str, Any], *, python: str, env: Mapping[str, str],
             timeout: float, arm: str) -> tuple[dict[str, Any], float]:
    """One fresh interpreter: import the target, call it with ``kwargs``, read back its JSON."""
    with tempfile.TemporaryDirectory(prefix="course-process-") as tmp:
        args_path, out_path = Path(tmp) / "kwargs.json", Path(tmp) / "result.json"
        args_path.write_text(json.dumps(dict(kwargs)))
        started = time.perf_counter()
        try:
            proc = subprocess.run([python, "-m", "course_utils.procs._child", target, str(args_path), str(out_path)],
                                  capture_output=True, text=True, timeout=timeout, env={**os.environ, **env})
        except subprocess.TimeoutExpired as e:
            raise RuntimeError(f"arm {arm!r}: the process ran past its {timeout:.0f} s timeout") from e
        wall = time.perf_counter() - started
        if proc.returncode != 0 or not out_path.exists():
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-12:])
            raise RuntimeError(f"arm {arm!r}: the process running {target} failed (exit {proc.returncode}):\n{tail}")
        return json.loads(out_path.read_text()), wall


def in_processes(target: str, arms: Mapping[str, Mapping[str, Any]], *, rounds: int | None = None,
                 control: bool = True, env: Mapping[str, str] | None = None, python: str | None = None,
                 timeout: float = 600.0, seed: int | None = None, progress: bool = True,
                 preload: Sequence[str] = ()) -> ProcessRuns:
    """Run ``target(**arms[name])`` in a fresh Python process per arm per round, alternating the arms.

    Args:
        target: ``"package.module:function"`` or ``"path/to/file.py:function"``; the function takes
            the arm's keyword arguments and returns a dict that JSON can carry (numbers, lists,
            strings), for example first-step and steady-state times measured with ``cu.benchmark``.
        arms: arm name -> keyword arguments; the first arm is the baseline.
        rounds: rounds to run; by default the fewest for a 95 % interval (6).
        control: run the baseline a second time each round as the A/A control (needed by
            :meth:`ProcessRuns.compare`).
        env: extra environment variables for the processes (``COURSE_PROFILE`` is passed on).
        python: the interpreter; this one by default.
        timeout: seconds one process may take.
        seed: seed of the arm orders (random Latin squares: each arm runs once in every position
            per block of as many rounds as arms); None (the default) draws a fresh one, so that no
            arm is always first. The seed used is ``ProcessRuns.seed``.
        progress: show a progress bar over the processes.
        preload: modules (``("torch",)``) imported once by a server that forks every run, to save
            each run the import; empty (the default): a new interpreter per run. Not with ``python``.

    Returns:
        The :class:`ProcessRuns`.

    Raises:
        ValueError: no arms, a bad target, an arm named like the control, arguments JSON cannot
            carry, or a seed that is not a whole number >= 0.
        RuntimeError: a process failed or timed out (its error's last lines are in the message).
    """
    if not arms:
        raise ValueError("in_processes needs at least one arm")
    if ":" not in target or not target.rsplit(":", 1)[1].isidentifier():
        raise ValueError(f"target must be 'module:function' or 'file.py:function', got {target!r}")
    if CONTROL in arms:
        raise ValueError(f"{CONTROL!r} is the name of the baseline's second copy; name the arm otherwise")
    for name, kwargs in arms.items():
        try:
            json.dumps(dict(kwargs))
        except TypeError as e:
            raise ValueError(f"arm {name!r}: its arguments must be JSON (numbers, strings, lists): {e}") from e
    if preload and python is not None:
        raise ValueError("preload forks runs from this interpreter's modules: it cannot use another python")
    n = rounds if rounds is not None else min_rounds()
    if n < 1:
        raise ValueError(f"rounds must be >= 1, got {n}")
    seed = _order_seed(seed)
    baseline = next(iter(arms))
    runs: dict[str, dict[str, Any]] = {name: dict(kw) for name, kw in arms.items()}
    if control:
        runs = {baseline: runs[baseline], CONTROL: runs[baseline], **{k: v for k, v in runs.items() if k != baseline}}
    pr = ProcessRuns(target=target, arms={k: dict(v) for k, v in arms.items()}, baseline=baseline,
                     results={k: [] for k in runs}, wall_s={k: [] for k in runs}, preload=list(preload),
                     seed=seed)
    child_env = {"COURSE_PROFILE": os.environ.get("COURSE_PROFILE", ""), **(env or {})}
    orders = latin_orders(n, list(runs), random.Random(seed))
    bar = None
    from ..procs._forkserver import ForkServer  # not at import: `python -m course_utils.procs._forkserver` runs it

    server = ForkServer(preload, child_env) if preload else None
    if progress:
        bar = progress_bar(n * len(runs), f"fresh processes ({', '.join(arms)})", leave=False)
    try:
        for order in orders:
            pr.order.append(list(order))
            for name in order:
                if server is not None:
                    result, wall = server.run(target, runs[name], env=child_env, timeout=timeout, arm=name)
                else:
                    result, wall = _run_one(target, runs[name], python=python or sys.executable, env=child_env,
                                            timeout=timeout, arm=name)
                pr.results[name].append(result)
                pr.wall_s[name].append(wall)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if server is not None:
            server.close()
    return pr

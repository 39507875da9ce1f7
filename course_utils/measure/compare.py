"""Timing for learners: one function, a baseline against a trick, and the way not to do it.

:func:`benchmark` times one function, :func:`compare` a baseline against a trick, and
:func:`naive_compare` shows what A-then-B timing gets wrong.

:func:`compare` is a sweep of one arm: the engine (:mod:`course_utils.measure.engine`) times each arm's
first call on its own, warms up, then runs the baseline, the baseline again (the A/A control) and
the trick in interleaved rounds in random Latin-square orders, one untimed call before each timed
block, each arm with its own calls per block, the garbage collector off and the device
synchronised. :func:`~course_utils.measure.analysis.analyze` turns the rounds into the verdict.
:func:`compare`'s keyword arguments travel to the engine as one
:class:`~course_utils.measure.options.TimingOptions`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch

from ..env import check_device, synchronize
from ..units import format_seconds
from .clock import BUDGETS, MAX_ROUNDS, call, check_callable
from .comparison import Comparison
from .engine import run_checked
from .options import TimingOptions

__all__ = ["BUDGETS", "MAX_ROUNDS", "Timing", "benchmark", "compare", "format_seconds", "naive_compare"]

@dataclass
class Timing:
    """The result of :func:`benchmark`: seconds per call of one function."""

    label: str
    median_s: float
    iqr_s: float
    mean_s: float
    measurements: int
    num_threads: int
    device: str

    def __str__(self) -> str:
        s = "s" if self.measurements != 1 else ""
        t = "s" if self.num_threads != 1 else ""
        return (f"{self.label}: {format_seconds(self.median_s)} per call (median, IQR "
                f"{format_seconds(self.iqr_s)}, {self.measurements} measurement{s}, "
                f"{self.num_threads} thread{t}, {self.device})")

    def to_dict(self) -> dict[str, Any]:
        """Return the timing as a JSON-serialisable dict (``kind`` = ``"timing"``)."""
        return {"kind": "timing", **asdict(self)}


def benchmark(
    fn: Callable[[], Any],
    *,
    label: str = "fn",
    num_threads: int | None = None,
    min_run_time: float = 0.5,
    device: torch.device | str | None = None,
) -> Timing:
    """Time one function with ``torch.utils.benchmark`` (warm-up, sync, blocked runs).

    Use it to see how long one thing takes; to claim that one thing is faster than another,
    use :func:`compare`, which interleaves the two and runs an A/A control.

    Args:
        fn: a callable taking no arguments.
        label: a name for the printout.
        num_threads: torch threads during timing; the current count when omitted (note that
            ``torch.utils.benchmark.Timer`` itself defaults to 1).
        min_run_time: seconds of measurement at least.
        device: the device ``fn`` runs on; the Timer synchronises CUDA itself, and on Apple MPS
            each call is followed by a synchronisation so the clock stops when the work is done.

    Returns:
        A :class:`Timing` with median, IQR and mean seconds per call.

    Raises:
        TypeError: ``fn`` is not callable.
        ValueError: ``device`` is a CUDA or MPS device this machine does not have.
        RuntimeError: ``fn`` raised; the message names ``label``.
    """
    import logging

    # torch.utils.benchmark pulls in cpp_extension, which logs "No CUDA runtime is found" on
    # machines without a GPU; that line says nothing about the measurement.
    ext_log = logging.getLogger("torch.utils.cpp_extension")
    level = ext_log.level
    ext_log.setLevel(logging.ERROR)
    try:
        from torch.utils import benchmark as tbench
    finally:
        ext_log.setLevel(level)

    check_callable(fn, "fn")
    device = check_device(device)
    threads = num_threads or torch.get_num_threads()
    call(fn, label)  # warm-up, and a clear error before the Timer wraps it
    timed = fn
    if device.type == "mps":
        def timed() -> None:
            fn()
            synchronize(device)
    timer = tbench.Timer(stmt="fn()", globals={"fn": timed}, num_threads=threads, label=label)
    # the Timer synchronises the *current* CUDA device only: make it the one that runs fn
    on_device = torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()
    try:
        with on_device:
            m = timer.blocked_autorange(min_run_time=min_run_time)
    except Exception as e:
        raise RuntimeError(f"the arm {label!r} raised {type(e).__name__}: {e}") from e
    return Timing(label=label, median_s=float(m.median), iqr_s=float(m.iqr), mean_s=float(m.mean),
                  measurements=len(m.times), num_threads=threads, device=device.type)


def compare(
    baseline: Callable[[], Any],
    trick: Callable[[], Any],
    *,
    names: tuple[str, str] = ("baseline", "trick"),
    rounds: int | None = None,
    budget: float | None = None,
    warmup: int = 2,
    num_threads: int | None = None,
    min_round_time: float = 0.02,
    device: torch.device | str | None = None,
    level: float = 0.95,
    min_effect: float = 1.0,
    seed: int = 0,
    rerun: bool = True,
    progress: bool | None = None,
) -> Comparison:
    """Compare a baseline and a trick, interleaved, with an A/A control.

    First each arm's first call is timed on its own (compilation, autotuning and caches show up
    there), then ``warmup`` calls of each, then rounds: every round runs the baseline, the baseline
    again (the A/A control) and the trick, each in a block of calls sized to last about
    ``min_round_time``, after one untimed call, in random Latin-square orders. The speed-up is the
    median over rounds of baseline time (both copies) / trick time, with a distribution-free
    interval for that median (order statistics); the A/A control is the baseline against itself,
    at 99 %. When the control fails, the comparison runs once more and keeps the first run
    (``first_run``). The verdict follows :func:`~course_utils.measure.stats.verdict`.

    Args:
        baseline: callable taking no arguments, the plain version.
        trick: callable taking no arguments, the version with the trick.
        names: display names of the two arms.
        rounds: interleaved rounds, all of them run; by default as many as ``budget`` allows
            (6 to 240), stopping at the end of a block once the budget is spent.
        budget: seconds the whole comparison may take, warm-up included; by default
            :data:`BUDGETS` of the run profile (1 s smoke, 8 s cpu, 2 s gpu). At least the
            minimum rounds for the interval always run, even past the budget.
        warmup: untimed calls of each arm after the first call.
        num_threads: torch threads during the comparison (restored afterwards); current if None.
        min_round_time: each arm runs enough calls per block to take about this many seconds.
        device: the device the arms run on; :func:`~course_utils.env.choose_device` if None.
        level: coverage of the interval (0.95: at least 6 rounds).
        min_effect: a declared minimum speed-up worth a verdict (1.0: any the interval shows).
        seed: seed of the arm orders.
        rerun: run once more when the A/A control fails.
        progress: show a progress bar; by default only when the comparison will take over 5 s.

    Returns:
        A :class:`~course_utils.measure.comparison.Comparison` (prints as a table, serialises; draw it with
        :func:`~course_utils.measure.figures.plot_comparison`).

    Raises:
        TypeError: an arm is not callable (the message names the argument).
        RuntimeError: an arm raised (the message names the arm).
        ValueError: ``rounds`` below the minimum for ``level``, a budget that is not positive, another
            value out of its range, or a ``device`` this machine does not have (checked before any arm runs).
    """
    check_callable(baseline, "baseline")
    check_callable(trick, "trick")
    opts = TimingOptions.for_arms(2, rounds=rounds, budget=budget, warmup=warmup, num_threads=num_threads,
                                  min_round_time=min_round_time, device=device, level=level, min_effect=min_effect,
                                  seed=seed, rerun=rerun, progress=progress)
    fns = {"baseline": baseline, "trick": trick}
    labels = {"baseline": names[0], "trick": names[1]}
    comps, _, _ = run_checked(fns, labels, "baseline", opts=opts, items=None, unit="",
                              desc=f"compare {names[1]} vs {names[0]}")
    return comps["trick"]


def naive_compare(
    baseline: Callable[[], Any],
    trick: Callable[[], Any],
    *,
    calls: int = 1,
    sync: bool = False,
    device: torch.device | str | None = None,
) -> float:
    """The way *not* to compare, kept for lesson 00: time the baseline, then the trick, once each.

    No warm-up, no interleaving, no control and, unless ``sync`` is set, no device
    synchronisation, so on a GPU the clock stops before the work is done. Returns the apparent
    speed-up (baseline seconds / trick seconds). Call it a few times on the same function to see
    how much it lies; use :func:`compare` for real measurements.
    """
    check_callable(baseline, "baseline")
    check_callable(trick, "trick")
    device = check_device(device)
    seconds = []
    for fn, name in ((baseline, "baseline"), (trick, "trick")):
        t0 = time.perf_counter()
        for _ in range(calls):
            call(fn, name)
        if sync:
            synchronize(device)
        seconds.append(time.perf_counter() - t0)
    return seconds[0] / seconds[1]

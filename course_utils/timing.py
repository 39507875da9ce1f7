"""The clock: time one function, or measure a baseline and a trick interleaved with an A/A control.

:func:`compare` follows the course's measurement standard: time each arm's first call on its own,
warm up, then run three arms — the baseline, the baseline again (the A/A control) and the trick —
in interleaved rounds whose arm order is balanced (every order equally often), with the garbage
collector off inside timed blocks and the device synchronised (CUDA events on the device
measured). :func:`~course_utils.comparison.analyze` turns the per-round times into the verdict.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch

from .comparison import Comparison, analyze, format_seconds
from .env import choose_device, get_profile, synchronize
from .stats import min_rounds

__all__ = ["BUDGETS", "Timing", "benchmark", "compare", "format_seconds", "naive_compare"]

#: Default seconds a :func:`compare` may take per profile, warm-up included.
BUDGETS: dict[str, float] = {"smoke": 1.0, "cpu": 8.0, "gpu": 8.0}
MAX_ROUNDS = 240


def _check_callable(fn: Any, argname: str) -> None:
    if not callable(fn):
        raise TypeError(f"{argname} must be a callable taking no arguments, got {type(fn).__name__}")


@contextlib.contextmanager
def _threads(num_threads: int | None) -> Iterator[int]:
    """Pin torch's intra-op thread count for the block, then restore it."""
    old = torch.get_num_threads()
    if num_threads is not None:
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        torch.set_num_threads(num_threads)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(old)


@contextlib.contextmanager
def _gc_off() -> Iterator[None]:
    """Keep the garbage collector out of a timed block (as ``timeit`` does)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _call(fn: Callable[[], Any], name: str) -> None:
    try:
        fn()
    except Exception as e:  # name the arm, keep the original traceback
        raise RuntimeError(f"the arm {name!r} raised {type(e).__name__}: {e}") from e


def _time_calls(fn: Callable[[], Any], name: str, calls: int, device: torch.device) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls, synchronised (CUDA events on GPU)."""
    synchronize(device)
    with _gc_off():
        if device.type == "cuda":
            with torch.cuda.device(device):  # events and sync on the device measured
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(calls):
                    _call(fn, name)
                end.record()
                end.synchronize()
            return start.elapsed_time(end) / 1e3 / calls
        t0 = time.perf_counter()
        for _ in range(calls):
            _call(fn, name)
        synchronize(device)
        return (time.perf_counter() - t0) / calls


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

    _check_callable(fn, "fn")
    device = torch.device(device) if device is not None else choose_device()
    threads = num_threads or torch.get_num_threads()
    _call(fn, label)  # warm-up, and a clear error before the Timer wraps it
    timed = fn
    if device.type == "mps":
        def timed() -> None:
            fn()
            synchronize(device)
    timer = tbench.Timer(stmt="fn()", globals={"fn": timed}, num_threads=threads, label=label)
    try:
        m = timer.blocked_autorange(min_run_time=min_run_time)
    except Exception as e:
        raise RuntimeError(f"the arm {label!r} raised {type(e).__name__}: {e}") from e
    return Timing(label=label, median_s=float(m.median), iqr_s=float(m.iqr), mean_s=float(m.mean),
                  measurements=len(m.times), num_threads=threads, device=device.type)


def balanced_orders(rounds: int, arms: tuple[str, ...], rng: random.Random) -> list[tuple[str, ...]]:
    """Arm orders for ``rounds`` rounds: every permutation once per block, blocks shuffled.

    With three arms a block is six rounds, and within a block each arm runs first, second and
    third equally often, so a drift inside a round (a warming CPU, a filling cache) cannot favour
    one arm. Leftover rounds take the first permutations of a shuffled block.
    """
    perms = list(itertools.permutations(arms))
    orders: list[tuple[str, ...]] = []
    while len(orders) < rounds:
        block = perms[:]
        rng.shuffle(block)
        orders += block
    return orders[:rounds]


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
    seed: int = 0,
    progress: bool | None = None,
) -> Comparison:
    """Compare a baseline and a trick, interleaved, with an A/A control.

    First each arm's first call is timed on its own (compilation, autotuning and caches show up
    there), then ``warmup`` calls of each, then rounds: every round runs the baseline, the baseline
    again (the A/A control) and the trick, each for the same number of calls, in an order balanced
    over the rounds. The speed-up is the median over rounds of baseline time / trick time, with a
    distribution-free interval for that median (order statistics); the A/A control is the same
    statistic for the baseline against itself. The verdict follows
    :func:`~course_utils.stats.verdict`.

    Args:
        baseline: callable taking no arguments, the plain version.
        trick: callable taking no arguments, the version with the trick.
        names: display names of the two arms.
        rounds: interleaved rounds, all of them run; by default as many as ``budget`` allows
            (6 to 240), stopping at the end of a balanced block once the budget is spent.
        budget: seconds the whole comparison may take, warm-up included; by default
            :data:`BUDGETS` of the run profile (1 s smoke, 8 s cpu and gpu). At least the
            minimum rounds for the interval always run, even past the budget.
        warmup: untimed calls of each arm after the first call.
        num_threads: torch threads during the comparison (restored afterwards); current if None.
        min_round_time: each arm runs enough calls per round to take about this many seconds.
        device: the device the arms run on; :func:`~course_utils.env.choose_device` if None.
        level: coverage of the intervals (0.95: at least 6 rounds).
        seed: seed of the arm order.
        progress: show a progress bar; by default only when the comparison will take over 5 s.

    Returns:
        A :class:`~course_utils.comparison.Comparison` (prints as a table, plots, serialises).

    Raises:
        TypeError: an arm is not callable (the message names the argument).
        RuntimeError: an arm raised (the message names the arm).
        ValueError: fewer rounds than the interval needs, or a budget that is not positive.
    """
    _check_callable(baseline, "baseline")
    _check_callable(trick, "trick")
    need = min_rounds(level)
    if rounds is not None and rounds < need:
        raise ValueError(f"rounds must be at least {need} for a {level:.0%} interval, got {rounds}")
    if budget is not None and budget <= 0:
        raise ValueError(f"budget must be positive seconds, got {budget}")
    device = torch.device(device) if device is not None else choose_device()
    budget = budget if budget is not None else BUDGETS[get_profile(device)]
    base_name, trick_name = names
    arms = {"A": (baseline, base_name), "A2": (baseline, base_name), "B": (trick, trick_name)}
    start = time.perf_counter()
    with _threads(num_threads) as threads:
        first = (_time_calls(baseline, base_name, 1, device), _time_calls(trick, trick_name, 1, device))
        for _ in range(warmup):
            for key in ("A", "B"):
                _time_calls(*arms[key], 1, device)
        single = max(_time_calls(*arms[k], 1, device) for k in ("A", "B"))
        calls = max(1, math.ceil(min_round_time / max(single, 1e-9)))
        per_round = 3 * calls * single
        budget_rounds = rounds is None  # explicit rounds always run in full
        if rounds is None:
            left = budget - (time.perf_counter() - start)
            planned = int(min(MAX_ROUNDS, left // max(per_round, 1e-9)))
            rounds = max(need, planned - planned % math.factorial(len(arms)))  # whole balanced blocks
        show = progress if progress is not None else rounds * per_round > 5.0
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=rounds, desc=f"compare {trick_name} vs {base_name}", leave=False)
        times: dict[str, list[float]] = {k: [] for k in arms}
        try:
            for r, order in enumerate(balanced_orders(rounds, tuple(arms), random.Random(seed)), 1):
                for key in order:
                    times[key].append(_time_calls(*arms[key], calls, device))
                if bar is not None:
                    bar.update(1)
                # Planned from one warm call, the rounds can overrun a loaded machine: stop at the
                # end of a balanced block once the budget is spent (never below the minimum).
                if (budget_rounds and r >= need and r % math.factorial(len(arms)) == 0
                        and time.perf_counter() - start > budget):
                    break
        finally:
            if bar is not None:
                bar.close()
    return analyze(times["A"], times["A2"], times["B"], names=(base_name, trick_name), level=level,
                   first_call_s=first, calls_per_round=calls, num_threads=threads, device=device.type)


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
    _check_callable(baseline, "baseline")
    _check_callable(trick, "trick")
    device = torch.device(device) if device is not None else choose_device()
    seconds = []
    for fn, name in ((baseline, "baseline"), (trick, "trick")):
        t0 = time.perf_counter()
        for _ in range(calls):
            _call(fn, name)
        if sync:
            synchronize(device)
        seconds.append(time.perf_counter() - t0)
    return seconds[0] / seconds[1]

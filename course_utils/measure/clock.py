"""The clock: seconds per call of a function, synchronised, with the garbage collector off.

The lowest layer of the measurement engine. :mod:`~course_utils.measure.rounds` plans and runs
interleaved rounds on top of it; :func:`~course_utils.measure.sweep.sweep` and
:func:`~course_utils.measure.compare.compare` turn the rounds into verdicts.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ..env import synchronize

__all__ = ["BUDGETS", "MAX_ROUNDS", "call", "check_callable", "gc_off", "loop_overhead", "threads",
           "time_calls"]

#: Default seconds a :func:`~course_utils.measure.compare.compare` may take per profile, warm-up included
#: (a sweep gets ``(arms + 1) / 3`` times as much). gpu: 2 s, so that every lesson's reference run
#: fits 9 minutes on an H100/H200 (tools/estimate_gpu.py). There a step of a few milliseconds gives
#: 20-27 rounds in 2 s (blocks of ~20 ms per arm, three keys a round), above the 12 at which the
#: engine's 80 % power for 1.2x is proven; arms of ~20 ms get ~13 rounds, ~30 ms ~10, and from ~35 ms
#: on the minimum 6 (the engine warns then): a lesson with arms that slow passes its own ``budget=``.
BUDGETS: dict[str, float] = {"smoke": 1.0, "cpu": 8.0, "gpu": 2.0}
#: Most rounds a comparison runs, whatever its budget.
MAX_ROUNDS = 240


def check_callable(fn: Any, argname: str) -> None:
    """Raise TypeError naming ``argname`` unless ``fn`` can be called."""
    if not callable(fn):
        raise TypeError(f"{argname} must be a callable taking no arguments, got {type(fn).__name__}")


@contextlib.contextmanager
def threads(num_threads: int | None) -> Iterator[int]:
    """Pin torch's intra-op thread count for the block (None: keep it), then restore it."""
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
def gc_off() -> Iterator[None]:
    """Keep the garbage collector out of a timed block (as ``timeit`` does)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def call(fn: Callable[[], Any], name: str) -> None:
    """Call ``fn``; an exception is re-raised as RuntimeError naming the arm ``name``."""
    try:
        fn()
    except Exception as e:  # name the arm, keep the original traceback
        raise RuntimeError(f"the arm {name!r} raised {type(e).__name__}: {e}") from e


def time_calls(fn: Callable[[], Any], name: str, calls: int, device: torch.device) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls, synchronised (CUDA events on a GPU)."""
    synchronize(device)
    with gc_off():
        if device.type == "cuda":
            with torch.cuda.device(device):  # events and sync on the device measured
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(calls):
                    call(fn, name)
                end.record()
                end.synchronize()
            return start.elapsed_time(end) / 1e3 / calls
        t0 = time.perf_counter()
        for _ in range(calls):
            call(fn, name)
        synchronize(device)
        return (time.perf_counter() - t0) / calls


def _nothing() -> None:
    return None


def loop_overhead(calls: int, device: torch.device, repeats: int = 5) -> float:
    """Seconds per call that :func:`time_calls` itself adds: the median of empty blocks.

    Subtracted from every arm's time, so that a cheap arm timed in a long block is not pulled
    toward the ratio 1 by the loop's own cost.
    """
    return statistics.median(time_calls(_nothing, "empty block", max(1, calls), device) for _ in range(repeats))

"""A small ``torch.profiler`` table: where one call of a function spends its time.

One table per lesson at most, where it explains the effect (which ops dominate a step, that
tensor-core kernels ran under autocast …). The profiler adds overhead: never time with it on.
:func:`flop_count` counts the floating-point operations of one call (``FlopCounterMode``): a
deterministic measure of work, to set beside a time ratio or to size a profile.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .env import synchronize

__all__ = ["flop_count", "profile_table"]


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the profiler's C++ log lines (start/stop markers) that bypass Python's stderr."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "5")
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 (some embedded interpreters): nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def profile_table(fn: Callable[[], Any], *, device: torch.device | str = "cpu", row_limit: int = 8,
                  warmup: int = 1, sort_by: str | None = None) -> str:
    """Profile one call of ``fn`` (after ``warmup`` calls) and return the top ops by self time.

    Args:
        fn: a callable taking no arguments (one training step, one forward pass …).
        device: the device ``fn`` runs on; on CUDA the table also shows kernels and is sorted by
            self CUDA time.
        row_limit: rows of the table.
        warmup: untimed calls first, so one-off costs (allocation, autotuning) stay out.
        sort_by: a ``key_averages().table`` sort key; by default self CPU time, or self CUDA
            time on a GPU.

    Returns:
        The table as text (print it).

    Raises:
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    from torch.profiler import ProfilerActivity, profile

    device = torch.device(device)
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    for _ in range(warmup):
        fn()
    synchronize(device)
    with _quiet_stderr(), profile(activities=activities) as prof:
        fn()
        synchronize(device)
    key = sort_by or ("self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total")
    return prof.key_averages().table(sort_by=key, row_limit=row_limit)


def flop_count(fn: Callable[[], Any]) -> int:
    """Floating-point operations of one call of ``fn`` (forward and backward, if it runs one).

    Counted by ``torch.utils.flop_counter.FlopCounterMode`` from the operators' shapes, the same
    on every device: matrix multiplications and convolutions (2 per multiply-add), attention;
    element-wise ops, norms and pooling count 0, so a time ratio above the FLOP ratio is the
    memory-bound work that FLOPs leave out.
    """
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())

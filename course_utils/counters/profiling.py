"""A small ``torch.profiler`` table: where one call of a function spends its time.

One table per lesson at most, where it explains the effect (which ops dominate a step, that
tensor-core kernels ran under autocast …). The profiler adds overhead: never time with it on.
:func:`flop_count` counts the floating-point operations of one call (``FlopCounterMode``): a
deterministic measure of work, to set beside a time ratio or to size a profile.
:func:`op_counts` counts the ATen operators one call dispatches (a ``TorchDispatchMode``): which
ops a change adds or removes, exactly, where a profiler table shows only the slowest rows.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch

from ..env import synchronize

__all__ = ["flop_count", "op_counts", "profile_table", "quiet_stderr"]


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
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
    with quiet_stderr(), profile(activities=activities) as prof:
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


def op_counts(fn: Callable[[], Any], *, namespace: str | None = "aten") -> collections.Counter[str]:
    """How many times one call of ``fn`` dispatched each operator, e.g. ``{"aten::zero_": 6, ...}``.

    Counted by a ``TorchDispatchMode`` below autograd, so backward's ops (``AccumulateGrad``'s
    ``aten::add_`` into an existing gradient) count too, on any device, without timing anything.
    Deterministic for deterministic code: subtract two counters to see what a change adds
    (``op_counts(a) - op_counts(b)`` keeps the positive differences).

    Args:
        fn: a callable taking no arguments (one training step …); run once, under the mode.
        namespace: keep only operators of this namespace ("aten"); None keeps every one
            (``profiler::`` markers included).

    Returns:
        A ``collections.Counter`` from operator name (``"aten::add_"``, overload left out) to calls.

    Raises:
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: collections.Counter[str] = collections.Counter()

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            counts[func._schema.name] += 1
            return func(*args, **(kwargs or {}))

    with _Count():
        fn()
    if namespace is not None:
        prefix = f"{namespace}::"
        counts = collections.Counter({k: v for k, v in counts.items() if k.startswith(prefix)})
    return counts

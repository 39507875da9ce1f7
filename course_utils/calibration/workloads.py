"""The real workloads :func:`~course_utils.calibration.runner.calibrate` compares, and what their comparisons gave.

Each :class:`Workload` builds its two arms on a device: for an A/A workload the same function twice
(a µs tensor add, a ms matmul, a training step of the course's MLP, a DataLoader epoch with
workers); the process workload runs :func:`_calibration_child` in fresh processes
(``cu.in_processes``). Two *carry-over* pairs leave work behind for the next block: a thread that
keeps copying a large buffer after the trick's calls (same work in the timed calls, so the true
speed-up is 1), and a DataLoader epoch whose worker processes start and shut down around a cheap,
cache-sensitive sum (true ratio not known). :class:`~course_utils.calibration.records.Trial` records one comparison,
:class:`~course_utils.calibration.records.WorkloadResult` one workload's comparisons and their rates.
Nothing here runs on import.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["WORKLOADS", "Arms", "Workload"]

#: ``(baseline, trick)``: callables taking no arguments.
Arms = tuple[Callable[[], Any], Callable[[], Any]]
#: ``cu.in_processes`` target of the process workload.
CHILD = "course_utils.calibration.workloads:_calibration_child"


def _calibration_child(size: int = 64, calls: int = 200) -> dict[str, float]:
    """One run of the process workload: a small matmul in a fresh process, one thread, first call apart."""
    torch.set_num_threads(1)
    a = torch.randn(size, size, generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter()
    a @ a
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(calls):
        a @ a
    return {"first_s": first, "steady_s": (time.perf_counter() - t0) / calls}


class _Mark:
    """Notes the time of each :meth:`mark` (the baseline's side of the leftover pair: the same bookkeeping)."""

    last = -math.inf

    def mark(self) -> None:
        self.last = time.perf_counter()


class _Leftover(_Mark):
    """A thread that copies a 64 MB buffer from ``delay`` to ``delay + linger`` s after each mark.

    64 MB is twice a large L3 cache. The trick marks after each of its calls, which come back to
    back, so while its block runs the thread waits; it starts when the block is over, outlasts the
    next block's one untimed call, and the trick's next call stops it. Its copies release the GIL:
    it competes for caches and memory bandwidth, not for the interpreter.
    """

    def __init__(self, linger: float = 0.02, delay: float = 0.003) -> None:
        self.linger, self.delay = linger, delay
        self.src, self.dst = np.ones(2**23), np.empty(2**23)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        i, chunk = 0, 2**17  # 1 MB a copy (a fraction of a ms): the window is checked between copies
        while not self.stop.is_set():
            if self.delay < time.perf_counter() - self.last < self.delay + self.linger:
                np.copyto(self.dst[i:i + chunk], self.src[i:i + chunk])
                i = (i + chunk) % self.src.size
            else:
                time.sleep(0.0005)


def _add(device: torch.device) -> Callable[[], Any]:
    a, b = torch.randn(64, device=device), torch.randn(64, device=device)
    return lambda: a + b


def _matmul(device: torch.device) -> Callable[[], Any]:
    n = {"cuda": 4096, "mps": 1024}.get(device.type, 384)
    m = torch.randn(n, n, device=device)
    return lambda: m @ m


def _train_step(device: torch.device) -> Callable[[], Any]:
    from ..data.loaders import synthetic
    from ..training.loop import train_step
    from ..training.models import MLPConfig, make_mlp

    model = make_mlp(MLPConfig.for_profile("smoke", 28 * 28)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = synthetic(128, (1, 28, 28), device=device)
    return lambda: train_step(model, batch, opt)


def _epoch(device: torch.device) -> Callable[[], Any]:
    from torch.utils.data import DataLoader, TensorDataset

    from ..data.loaders import synthetic

    data = TensorDataset(*synthetic(256, (3, 16, 16)))

    def epoch() -> None:  # workers start with the iterator and are joined when it is exhausted
        for _ in DataLoader(data, batch_size=32, num_workers=2):
            pass
    return epoch


def _sum(device: torch.device) -> Callable[[], Any]:
    x = torch.randn(2**16)  # 256 KB: stays in a core's L2 cache while nothing else runs
    return x.sum


def _same(make: Callable[[torch.device], Callable[[], Any]]) -> Callable[[torch.device], Any]:
    @contextlib.contextmanager
    def arms(device: torch.device) -> Iterator[Arms]:
        fn = make(device)
        yield fn, fn
    return arms


@contextlib.contextmanager
def _leftover_thread(device: torch.device) -> Iterator[Arms]:
    total, quiet, left = _sum(device), _Mark(), _Leftover()

    def baseline() -> Any:  # the same work and bookkeeping as the trick: a true speed-up of 1
        out = total()
        quiet.mark()
        return out

    def trick() -> Any:
        out = total()
        left.mark()
        return out
    try:
        yield baseline, trick
    finally:
        left.stop.set()
        left.thread.join()


@contextlib.contextmanager
def _epoch_after_sum(device: torch.device) -> Iterator[Arms]:
    yield _sum(device), _epoch(device)


@dataclass(frozen=True)
class Workload:
    """One kind of work: how to build its arms, its share of the comparisons, its budget per comparison.

    ``arms(device)`` is a context manager giving ``(baseline, trick)``; None marks the process
    workload (rounds of ``cu.in_processes``, no budget). ``true_speedup``: 1.0 for arms of equal
    speed, None when not known. ``carry``: a pair built to leave work behind for the next block.
    ``sweep_rounds``: rounds of a ``cu.sweep`` of the baseline against itself that records block
    times (0: none). ``cpu_only``: timed on the CPU whatever the device (host-side work).
    """

    name: str
    description: str
    arms: Callable[[torch.device], contextlib.AbstractContextManager[Arms]] | None
    weight: float = 1.0
    budget: float | None = 1.5
    true_speedup: float | None = 1.0
    carry: bool = False
    sweep_rounds: int = 24
    cpu_only: bool = False


#: The workloads of a calibration, by name; ``weight`` is each one's share of the comparisons.
WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("add", "a 64-element tensor add (µs)", _same(_add), 0.23),
    Workload("matmul", "a matmul of about a ms (384² on a CPU, 4096² on CUDA)", _same(_matmul), 0.23),
    Workload("train-step", "one training step of the course's MLP (smoke sizes, batch 128)", _same(_train_step),
             0.21),
    Workload("loader-epoch", "a DataLoader epoch, 2 workers, 256 images in memory (worker start-up included)",
             _same(_epoch), 0.07, budget=1.0, sweep_rounds=8, cpu_only=True),
    Workload("processes", "6 rounds of cu.in_processes, a small matmul per fresh process (torch preloaded)",
             None, 0.11, budget=None),
    Workload("leftover-thread", "a 256 KB sum vs the same sum leaving a thread that copies 64 MB 3-23 ms after it",
             _leftover_thread, 0.10, carry=True, sweep_rounds=0, cpu_only=True),
    Workload("epoch-vs-sum", "a 256 KB sum vs a DataLoader epoch with 2 workers (started and shut down in it)",
             _epoch_after_sum, 0.05, budget=6.0, true_speedup=None, carry=True, sweep_rounds=0, cpu_only=True),
)}

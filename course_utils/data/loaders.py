"""Feeding a training loop: :func:`batches` of in-memory tensors, :func:`synthetic` data, :func:`worker_counts`.

:func:`batches` yields mini-batches of tensors already on the device, where no DataLoader is
needed; :func:`worker_counts` is lesson 02's rule for the ``num_workers`` values a DataLoader
sweep should try; :func:`synthetic` makes random inputs for pure timing. Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import torch

__all__ = ["batches", "synthetic", "worker_counts"]


def synthetic(n: int, shape: tuple[int, ...], num_classes: int = 10, *, seed: int = 0,
              device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Random inputs and labels for pure timing, where what is learned does not matter."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn((n, *shape), generator=g)
    y = torch.randint(0, num_classes, (n,), generator=g)
    return X.to(device), y.to(device)


def worker_counts(cpus: int, batches_per_epoch: int, *, also: Iterable[int] = ()) -> list[int]:
    """The ``num_workers`` values worth sweeping: 0, 1, 2, 4 … up to ``min(cpus + 1, batches_per_epoch)``.

    A worker makes whole batches, so an epoch of B batches keeps at most B workers busy, and
    workers beyond the CPUs the process may use only take turns (one past them shows that). The
    counts are 0, the powers of two below the cap, ``cpus`` and the cap itself, each at most the
    cap. ``also`` adds counts to check (a rule of thumb such as 4 per GPU the process drives);
    those above the cap are left out, since they could only sit idle or take turns.

    ``worker_counts(2, 24)`` is ``[0, 1, 2, 3]``; ``worker_counts(16, 16)`` is
    ``[0, 1, 2, 4, 8, 16]``; ``worker_counts(8, 1)`` is ``[0, 1]``.

    Args:
        cpus: CPUs this process may use (``os.sched_getaffinity``, not ``os.cpu_count()``).
        batches_per_epoch: ``len(loader)`` for one epoch.
        also: further counts to include when they are within the cap.

    Returns:
        Sorted distinct counts, 0 first.

    Raises:
        ValueError: ``cpus`` or ``batches_per_epoch`` below 1, or a negative count in ``also``.
    """
    for name, value in (("cpus", cpus), ("batches_per_epoch", batches_per_epoch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    extra = [int(n) for n in also]
    if any(n < 0 for n in extra):
        raise ValueError(f"worker counts cannot be negative, got {extra}")
    cap = min(int(cpus) + 1, int(batches_per_epoch))
    counts = {0, cap, min(int(cpus), cap)} | {2**k for k in range(cap.bit_length()) if 2**k <= cap}
    return sorted(counts | {n for n in extra if n <= cap})


def batches(X: torch.Tensor, y: torch.Tensor, batch_size: int, *, shuffle: bool = True,
            seed: int = 0, drop_last: bool = True) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield ``(X, y)`` mini-batches of in-memory tensors forever, one epoch after another.

    Data already on the device need no DataLoader (the CIFAR-10 speed-runs do the same).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = len(X)
    if drop_last and batch_size > n:
        raise ValueError(f"batch_size {batch_size} is larger than the dataset ({n} examples)")
    g = torch.Generator().manual_seed(seed)
    while True:
        idx = torch.randperm(n, generator=g) if shuffle else torch.arange(n)
        if X.device.type == "cuda":  # a pinned copy does not wait: no sync once per epoch
            idx = idx.pin_memory().to(X.device, non_blocking=True)
        else:
            idx = idx.to(X.device)
        stop = n - n % batch_size if drop_last else n
        for i in range(0, stop, batch_size):
            j = idx[i:i + batch_size]
            yield X[j], y[j]

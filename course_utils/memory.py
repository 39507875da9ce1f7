"""Memory accounting: bytes saved for backward (exact, any device), peak CUDA memory, parameters."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch

from .env import synchronize
from .units import format_bytes

__all__ = ["PeakMemory", "SavedTensors", "format_bytes", "param_count", "peak_memory", "peak_memory_stats",
           "saved_tensors"]


@dataclass
class SavedTensors:
    """What autograd kept for backward while a function ran."""

    bytes: int
    tensors: int
    excluded_bytes: int

    def __str__(self) -> str:
        return (
            f"{format_bytes(self.bytes)} saved for backward in {self.tensors} tensors"
            f" ({format_bytes(self.excluded_bytes)} of excluded tensors, e.g. parameters, not counted)"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-serialisable dict (``kind`` = ``"saved_tensors"``)."""
        return {"kind": "saved_tensors", "bytes": self.bytes, "tensors": self.tensors,
                "excluded_bytes": self.excluded_bytes}


def _storage_key(t: torch.Tensor) -> tuple[str, int]:
    storage = t.untyped_storage()
    return (str(t.device), storage.data_ptr())


def saved_tensors(
    fn: Callable[[], Any], *, exclude: Iterable[torch.Tensor] = ()
) -> SavedTensors:
    """Count the bytes autograd saves for backward while ``fn`` runs (usually a forward pass).

    Every tensor that autograd packs for backward passes through
    ``torch.autograd.graph.saved_tensors_hooks``; storages are counted once even when several
    views of them are saved. The count is exact and the same on CPU and GPU.

    A saved view keeps its whole storage alive, and the whole storage is counted: an input batch
    sliced from an in-memory dataset (``X[i:j]``) counts the entire dataset. Pass such inputs
    in ``exclude``, or clone the batch, to count activations only.

    Args:
        fn: a callable taking no arguments that runs the forward pass.
        exclude: tensors whose storage is not counted, typically ``model.parameters()``, so the
            result is the activation memory alone.

    Returns:
        A :class:`SavedTensors` with the bytes and the number of distinct storages.

    Raises:
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    excluded = {_storage_key(t) for t in exclude}
    seen: dict[tuple[str, int], int] = {}
    skipped: dict[tuple[str, int], int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = _storage_key(t)
        nbytes = t.untyped_storage().nbytes()
        (skipped if key in excluded else seen)[key] = nbytes
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return SavedTensors(bytes=sum(seen.values()), tensors=len(seen), excluded_bytes=sum(skipped.values()))


@dataclass
class PeakMemory:
    """Peak CUDA memory of a function, above what was allocated before it ran."""

    peak_bytes: int
    start_bytes: int
    reserved_bytes: int
    device: str

    def __str__(self) -> str:
        return (
            f"peak {format_bytes(self.peak_bytes)} above the {format_bytes(self.start_bytes)} allocated before"
            f" (the allocator reserved up to {format_bytes(self.reserved_bytes)} on {self.device})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-serialisable dict (``kind`` = ``"peak_memory"``)."""
        return {"kind": "peak_memory", "peak_bytes": self.peak_bytes, "start_bytes": self.start_bytes,
                "reserved_bytes": self.reserved_bytes, "device": self.device}


def peak_memory_stats(fn: Callable[[], Any], device: torch.device | str) -> PeakMemory | None:
    """Run ``fn`` once on a CUDA device and report its peak memory above what was allocated before.

    Before ``fn`` runs: ``gc.collect()`` (frees tensors kept only by reference cycles), a device
    sync, ``torch.cuda.empty_cache()`` and a reset of the peak counters. What is resident then
    (the model, the optimizer state, the input batch, any other model copy) is ``start_bytes``
    and is *not* in ``peak_bytes``: create inside ``fn`` whatever the measurement should count.

    Off CUDA this returns None without running ``fn``: the CPU and MPS allocators keep no peak
    counter. :func:`saved_tensors` measures activation memory exactly on any device.

    Args:
        fn: a callable taking no arguments, e.g. one training step.
        device: the CUDA device ``fn`` allocates on (the current one for a bare ``"cuda"``).

    Returns:
        A :class:`PeakMemory`: ``peak_bytes`` (highest allocated during ``fn`` minus
        ``start_bytes``), ``start_bytes``, and ``reserved_bytes`` (the most the caching
        allocator held from the driver during ``fn``, everything included); None off CUDA.

    Raises:
        TypeError: ``fn`` is not callable.
        RuntimeError: ``device`` is a CUDA device but CUDA is not available.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    device = torch.device(device)
    if device.type != "cuda":
        return None
    if not torch.cuda.is_available():
        raise RuntimeError(f"peak_memory on {device}: CUDA is not available here")
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    gc.collect()
    synchronize(device)
    with torch.cuda.device(device):
        torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    start = int(torch.cuda.memory_allocated(device))
    fn()
    synchronize(device)
    peak = int(torch.cuda.max_memory_allocated(device))
    reserved = int(torch.cuda.max_memory_reserved(device))
    return PeakMemory(peak_bytes=max(peak - start, 0), start_bytes=start, reserved_bytes=reserved,
                      device=str(device))


def peak_memory(fn: Callable[[], Any], device: torch.device | str) -> int | None:
    """Peak CUDA memory ``fn`` adds above what was allocated before it ran, in bytes; None off CUDA.

    The number of :func:`peak_memory_stats` (which also gives the resident and reserved bytes):
    the model and anything else resident before ``fn`` is not counted, so two variants measured
    one after the other compare fairly even while both models stay in memory.
    """
    stats = peak_memory_stats(fn, device)
    return None if stats is None else stats.peak_bytes


def param_count(model: torch.nn.Module, *, trainable_only: bool = False) -> int:
    """Number of parameters (elements) of ``model``; shared parameters count once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)

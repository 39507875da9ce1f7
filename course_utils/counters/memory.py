"""Memory accounting and out-of-memory handling.

Bytes saved for backward (exact, any device), peak CUDA memory, parameters; what counts as an
out-of-memory error, one guarded try of a step, and a cap on the CUDA allocator.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ..env import synchronize
from ..units import format_bytes

__all__ = ["CUDNN_OOM_MARKERS", "PeakMemory", "SavedTensors", "fits", "format_bytes", "is_out_of_memory",
           "memory_cap", "param_count", "peak_memory", "peak_memory_stats", "saved_tensors"]


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
        # detached: a tensor saved as its own op's output (ReLU, tanh) that the hook kept as itself would
        # hold its grad_fn, which holds it: a cycle that keeps every such graph alive after the step
        return t.detach()

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


#: Messages of the ``RuntimeError`` cuDNN raises when it cannot allocate a workspace, typically near a
#: memory cap: an out-of-memory in all but name (the allocator's own error is ``torch.OutOfMemoryError``).
#: "GET" is the heuristic search's wording, "FIND" the one ``torch.backends.cudnn.benchmark = True`` runs.
CUDNN_OOM_MARKERS = ("GET was unable to find an engine", "FIND was unable to find an engine",
                     "CUDNN_STATUS_ALLOC_FAILED")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` means "this step does not fit in memory".

    True for ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError`` is the same class) and for a
    ``RuntimeError`` whose message contains one of :data:`CUDNN_OOM_MARKERS` (cuDNN finding no
    algorithm whose workspace fits). False for every other exception, including a ``RuntimeError``
    that merely mentions memory or CUDA ("an illegal memory access was encountered"): a search that
    took those for "too big" would hide a bug.
    """
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and any(marker in str(exc) for marker in CUDNN_OOM_MARKERS)


def _free_caches() -> None:
    gc.collect()
    torch.cuda.empty_cache()  # a no-op when CUDA was never initialised


def fits(step: Callable[[], Any]) -> bool:
    """Run ``step()`` once: True when it ran, False when it ran out of memory (:func:`is_out_of_memory`).

    After an out-of-memory error the exception (and with it the failed step's frames and tensors) is
    dropped *before* ``gc.collect()`` and ``torch.cuda.empty_cache()`` run, so the memory it held is
    really returned. Every other exception propagates unchanged.

    Raises:
        TypeError: ``step`` is not callable.
    """
    if not callable(step):
        raise TypeError(f"step must be a callable taking no arguments, got {type(step).__name__}")
    try:
        step()
        return True
    except (torch.OutOfMemoryError, RuntimeError) as e:
        if not is_out_of_memory(e):
            raise
    # here the except block has ended: the exception and its traceback are gone
    _free_caches()
    return False


def _indexed(device: torch.device | str) -> torch.device:
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


@contextlib.contextmanager
def memory_cap(budget_bytes: int, device: torch.device | str) -> Iterator[int | None]:
    """Cap the CUDA caching allocator at what it holds now plus ``budget_bytes``, inside the block.

    ``torch.cuda.set_per_process_memory_fraction`` needs an indexed device (a bare ``"cuda"``
    raises ``ValueError``): the current device is used for it. Before the cap is set, caches are
    freed (``gc.collect()``, ``empty_cache()``); afterwards the fraction goes back to what it was
    (1.0 where torch cannot tell) and caches are freed again, also when the block raised. Off CUDA
    nothing is capped and the block runs with ``None``.

    Yields:
        The cap in bytes (what the allocator may reserve in all), None off CUDA.

    Raises:
        ValueError: ``budget_bytes`` is not positive.
    """
    if not budget_bytes > 0:
        raise ValueError(f"budget_bytes must be positive, got {budget_bytes}")
    device = _indexed(device)
    if device.type != "cuda":
        yield None
        return
    get = getattr(torch.cuda, "get_per_process_memory_fraction", None)
    before = float(get(device)) if get is not None else 1.0
    _free_caches()
    total = torch.cuda.get_device_properties(device).total_memory
    cap = min(total, int(torch.cuda.memory_reserved(device)) + int(budget_bytes))
    torch.cuda.set_per_process_memory_fraction(cap / total, device)
    try:
        yield cap
    finally:
        torch.cuda.set_per_process_memory_fraction(before, device)
        _free_caches()

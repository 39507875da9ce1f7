"""Memory accounting: bytes saved for backward (exact, any device), peak CUDA memory, parameters."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch

from .env import synchronize

__all__ = ["SavedTensors", "format_bytes", "param_count", "peak_memory", "saved_tensors"]


def format_bytes(n: float | None) -> str:
    """Format a byte count with a binary unit (``'1.50 MiB'``); ``'n/a'`` for None."""
    if n is None:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"  # pragma: no cover


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


def peak_memory(fn: Callable[[], Any], device: torch.device | str) -> int | None:
    """Peak CUDA memory allocated while ``fn`` runs, in bytes; None off CUDA.

    The peak counter is reset first, so the number includes what was already allocated
    (the model, the optimizer state) plus what ``fn`` added at its highest point.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return None
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    fn()
    synchronize(device)
    return int(torch.cuda.max_memory_allocated(device))


def param_count(model: torch.nn.Module, *, trainable_only: bool = False) -> int:
    """Number of parameters (elements) of ``model``; shared parameters count once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)

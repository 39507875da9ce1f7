"""The probe's instruments: an operator counter, anomaly detection switched off, facts of a loader and an optimizer.

:func:`~course_utils.doctor.probe.probe` uses them; :func:`anomaly_off` is also what the
``no_anomaly`` fix wraps around a step.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["HEAVY_OPS", "NORMS", "OpCounter", "anomaly_off", "fast_dtype", "implementation", "inputs_of",
           "loader_facts", "sync"]

#: The operators whose dtype says what precision the step computes in.
HEAVY_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution", "linear", "matmul"})
#: Layers that normalise their input (a conv bias before one is cancelled; a model that starts with one standardises).
NORMS = (torch.nn.modules.batchnorm._NormBase, torch.nn.LayerNorm, torch.nn.GroupNorm)


class OpCounter(TorchDispatchMode):
    """Operators of a block, and the dtype of each heavy one (:data:`HEAVY_OPS`)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: collections.Counter[str] = collections.Counter()
        self.dtypes: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        name = func.overloadpacket.__name__
        self.ops[name] += 1
        if name in HEAVY_OPS:
            first = next((a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), None)
            if first is not None:
                self.dtypes[str(first.dtype).removeprefix("torch.")] += 1
        return func(*args, **(kwargs or {}))


class _NoAnomaly:
    """``torch.autograd.detect_anomaly`` / ``set_detect_anomaly`` that leave the mode off."""

    def __init__(self, *_: Any, **__: Any) -> None:
        pass

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: Any) -> None:
        return None


@contextlib.contextmanager
def anomaly_off() -> Iterator[None]:
    """Anomaly detection off inside the block, even where the code in it turns it on itself."""
    saved = torch.autograd.detect_anomaly, torch.autograd.set_detect_anomaly
    mode = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    torch.autograd.detect_anomaly = torch.autograd.set_detect_anomaly = _NoAnomaly  # type: ignore[misc, assignment]
    torch.set_anomaly_enabled(False)
    try:
        yield
    finally:
        torch.autograd.detect_anomaly, torch.autograd.set_detect_anomaly = saved  # type: ignore[misc]
        torch.set_anomaly_enabled(*mode)


def implementation(opt: torch.optim.Optimizer) -> str:
    """Which implementation ``opt.step`` runs: "fused", "foreach" or "for-loop" (torch's default rule for None)."""
    d = opt.defaults
    if d.get("fused"):
        return "fused"
    if d.get("foreach") or (d.get("foreach") is None and d.get("fused") is not True and all(
            p.is_cuda for g in opt.param_groups for p in g["params"])):
        return "foreach"
    return "for-loop"


def loader_facts(loader: Any) -> dict[str, Any]:
    """The loader's type and settings (num_workers, pin_memory, persistent_workers, batch_size, drop_last)."""
    facts: dict[str, Any] = {"type": type(loader).__name__}
    for key in ("num_workers", "pin_memory", "persistent_workers", "batch_size", "drop_last"):
        if hasattr(loader, key):
            facts[key] = getattr(loader, key)
    facts["is_dataloader"] = isinstance(loader, torch.utils.data.DataLoader)
    return facts


def inputs_of(batch: Any) -> torch.Tensor | None:
    """The batch's inputs: its first tensor (None when it has none)."""
    first = batch[0] if isinstance(batch, (tuple, list)) and batch else batch
    return first if isinstance(first, torch.Tensor) else None


def sync(device: torch.device) -> None:
    """Wait for ``device`` (nothing on a CPU)."""
    from ..devices import synchronize

    synchronize(device)


def fast_dtype(device: torch.device) -> torch.dtype | None:
    """The dtype ``device`` computes faster than float32, by lesson 04's rule (None: float32 is the fastest)."""
    from ..hardware import pick_amp_dtype

    return pick_amp_dtype(device)

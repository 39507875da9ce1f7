"""Count host-device synchronisations, on a GPU and on a CPU-only machine alike.

A GPU runs asynchronously: the host queues kernels and moves on until it asks for a value
(``loss.item()``, ``print(t)``, ``if t > 0:``, ``t.cpu()``, ``t[mask]``) and then waits.
:func:`count_syncs` counts those points in a ``with`` block, so a CPU can count what a GPU would
wait for. How it decides (the rules are in :mod:`course_utils.counters.sync_rules`):

- A ``TorchDispatchMode`` sees the ATen operators, under ``no_grad`` and ``inference_mode`` too;
  what never reaches the dispatcher (``.tolist()``, ``print``, ``.numpy()``, ``.cpu()`` of a CPU
  tensor, ``torch.cuda.synchronize()``) is seen by wrapping those methods while a counter is
  active, on its own thread only (:mod:`course_utils.counters.sync_patches`). A read counts once,
  however many operators it runs.
- A tensor on an accelerator always counts. A CPU tensor stands in for a device tensor unless
  the block touched an accelerator (a GPU loop: a CPU read waits for nothing) or ``device=``
  says otherwise. Host-held CPU tensors never count: the optimizers' step counters (Adam's and
  AdamW's ``state["step"]``, ``.item()``-ed every step, stay on the CPU unless ``capturable`` or
  ``fused``; found through the optimizer step hooks), and what ``.cpu()``/``.numpy()`` returned
  and what is computed from it alone (``t.cpu().tolist()`` is one sync, as on a GPU).
- Not counted: compute, ``.detach()``, ``.to()`` on the same device (``.to("cpu")`` of a CPU
  tensor too: ``.cpu()`` counts), creating tensors, accumulating on the device.
- On CUDA also ``torch.cuda.synchronize()``, event and stream ``synchronize()``, and copies that
  block (:func:`~course_utils.counters.sync_rules.copy_blocks`).

On a GPU, :func:`cross_check_cuda` runs a function under both the counter and
``torch.cuda.set_sync_debug_mode("warn")`` (``tests/test_syncs.py`` has the CUDA-only test). They
should agree on ``.item()``, copies with ``non_blocking=False`` and data-dependent shapes. The
debug mode misses a non-blocking copy from pageable memory (and, depending on the version, device
and event waits), and warns for each of the reads a ``print`` makes, which counts once here.
"""

from __future__ import annotations

import collections
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from . import sync_patches
from .sync_rules import LABELS, classify, host_held_optimizer_state, is_accelerator

__all__ = ["CrossCheck", "SyncCounter", "count_syncs", "cross_check_cuda"]


class SyncCounter(TorchDispatchMode):
    """A dispatch mode that counts the points where the host would wait for the device.

    Use it through :func:`count_syncs`. ``count`` is the total; ``by_op`` counts per kind of
    read, named as a learner writes it (``".item()"``, ``"boolean-mask indexing t[mask]"`` …).
    """

    def __init__(self, device: torch.device | str | None = None) -> None:
        super().__init__()
        self.device = torch.device(device) if device is not None else None
        self._device_reads: collections.Counter[str] = collections.Counter()
        self._standin_reads: collections.Counter[str] = collections.Counter()
        self._saw_accelerator = False
        self._host = WeakIdKeyDictionary()  # host-held tensors: never counted
        self._optimizers: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._stepping = 0
        self._rescan = False
        self._depth = 0  # > 0 inside a read already counted at the Python level
        self._thread = threading.get_ident()
        self._hooks: list[Any] = []

    # ---- what the counter reports -------------------------------------------------------
    @property
    def cpu_stands_in(self) -> bool:
        """Whether CPU tensors count as stand-ins for device tensors in this block."""
        if self.device is not None:
            return not is_accelerator(self.device)
        return not self._saw_accelerator

    @property
    def by_op(self) -> collections.Counter[str]:
        """Syncs per kind of read, in a learner's words."""
        out = collections.Counter(self._device_reads)
        if self.cpu_stands_in:
            out.update(self._standin_reads)
        return out

    @property
    def count(self) -> int:
        """Number of host syncs seen."""
        return sum(self.by_op.values())

    def __str__(self) -> str:
        detail = ", ".join(f"{op} × {n}" for op, n in self.by_op.most_common())
        return f"{self.count} host sync{'s' if self.count != 1 else ''}" + (f" ({detail})" if detail else "")

    # ---- deciding and recording -----------------------------------------------------------
    def _host_held(self, t: torch.Tensor) -> bool:
        if t in self._host:
            return True
        if t.dim() == 0 and self._optimizers and (self._stepping or self._rescan):
            self._rescan = False
            for opt in list(self._optimizers.keys()):
                for v in host_held_optimizer_state(opt):
                    self._host[v] = True
            return t in self._host
        return False

    def _kind(self, t: torch.Tensor) -> str | None:
        """"device", "standin" (a CPU tensor standing in for one) or None (never waits)."""
        if t.device.type == "meta":
            return None
        if is_accelerator(t.device):
            return "device"
        return None if self._host_held(t) else "standin"

    def _record(self, key: str, kind: str | None) -> None:
        if kind == "device":
            self._device_reads[LABELS[key]] += 1
        elif kind == "standin":
            self._standin_reads[LABELS[key]] += 1

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        ins = _tensors(args) + _tensors(tuple(kwargs.values()))
        outs = _tensors(out if isinstance(out, (tuple, list)) else (out,))
        if not self._saw_accelerator and any(is_accelerator(t.device) for t in ins + outs):
            self._saw_accelerator = True
        if self._depth == 0:
            found = classify(func, args, kwargs)
            if found is not None:
                key, t = found
                self._record(key, "device" if t is None else self._kind(t))
        if ins and len(self._host) and all(t in self._host for t in ins):
            for t in outs:  # computed from host-held tensors only: on the host too
                self._host[t] = True
        return out

    # ---- entering and leaving -------------------------------------------------------------
    def _pre_step(self, optimizer: torch.optim.Optimizer, *_: Any) -> None:
        if threading.get_ident() == self._thread:
            self._optimizers[optimizer] = True
            self._stepping += 1

    def _post_step(self, optimizer: torch.optim.Optimizer, *_: Any) -> None:
        if threading.get_ident() == self._thread:
            self._stepping = max(0, self._stepping - 1)
            self._rescan = True

    def __enter__(self) -> SyncCounter:
        self._thread = threading.get_ident()
        self._hooks = [register_optimizer_step_pre_hook(self._pre_step),
                       register_optimizer_step_post_hook(self._post_step)]
        sync_patches.activate(self)  # the reads the dispatcher never sees
        super().__enter__()
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        try:
            super().__exit__(exc_type, exc_val, exc_tb)
        finally:
            for h in self._hooks:
                h.remove()
            self._hooks = []
            sync_patches.deactivate(self)


def _tensors(values: tuple | list) -> list[torch.Tensor]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            out.extend(x for x in v if isinstance(x, torch.Tensor))
    return out


def count_syncs(device: torch.device | str | None = None) -> SyncCounter:
    """Count host syncs inside a ``with`` block: ``with cu.count_syncs() as syncs: …``.

    Args:
        device: the device the loop runs on. None decides by itself: a block that touches an
            accelerator counts only what waits for it; one that stays on the CPU counts what would
            wait on a GPU. ``"cpu"`` always counts CPU tensors as stand-ins; ``"cuda"`` never.

    Returns:
        A :class:`SyncCounter`; read ``syncs.count`` (and ``syncs.by_op``) after the block.

    Example:
        >>> with count_syncs() as syncs:
        ...     total = torch.ones(3).sum().item()
        >>> syncs.count
        1
    """
    return SyncCounter(device)


@dataclass
class CrossCheck:
    """The counter's count beside what ``torch.cuda.set_sync_debug_mode("warn")`` flagged."""

    counted: int
    warned: int
    syncs: SyncCounter

    def __str__(self) -> str:
        return f"count_syncs: {self.syncs}; sync_debug_mode: {self.warned} warning(s)"


def cross_check_cuda(fn: Callable[[], Any]) -> CrossCheck:
    """Run ``fn()`` under :func:`count_syncs` and CUDA's sync debug mode; return both counts.

    Needs CUDA. Every synchronising CUDA call (``.item()``, a blocking copy, ``nonzero`` …)
    warns once in the debug mode; call ``fn`` once before to keep one-time set-up out.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("cross_check_cuda needs a CUDA device")
    torch.cuda.synchronize()
    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with count_syncs("cuda") as syncs:
            torch.cuda.set_sync_debug_mode("warn")
            try:
                fn()
            finally:
                torch.cuda.set_sync_debug_mode(previous)
    warned = sum("synchronizing CUDA operation" in str(w.message) for w in caught)
    return CrossCheck(syncs.count, warned, syncs)

"""Count host-device synchronisations with a dispatch mode: works on the CPU too.

A GPU runs asynchronously: the host queues kernels and moves on, until it asks for a value
(``loss.item()``, ``print(tensor)``, ``if tensor > 0``, ``tensor.cpu()``), and then it waits.
Every such read goes through one of a few ATen operators, which a
``TorchDispatchMode`` sees on any device, so a CPU-only machine can count the syncs a loop
*would* make on a GPU. ``torch.cuda.set_sync_debug_mode`` is the GPU-only equivalent.
"""

from __future__ import annotations

import collections
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["SyncCounter", "count_syncs"]

_aten = torch.ops.aten
#: Operators that read a value back to the host on every device (``.item()``, ``bool(t)`` …).
ALWAYS = {_aten._local_scalar_dense.default, _aten.equal.default, _aten.is_nonzero.default}
#: Operators that wait for an accelerator: data-dependent output shapes.
ON_ACCELERATOR = {_aten.nonzero.default, _aten.masked_select.default, _aten.unique_consecutive.default,
                  _aten._unique2.default, _aten.repeat_interleave.Tensor}


def _device_of(args: tuple[Any, ...]) -> torch.device | None:
    for a in args:
        if isinstance(a, torch.Tensor):
            return a.device
    return None


def _on_accelerator(device: torch.device | None) -> bool:
    return device is not None and device.type not in ("cpu", "meta")


class SyncCounter(TorchDispatchMode):
    """A dispatch mode that counts the operators that make the host wait for the device.

    Use it through :func:`count_syncs`. ``count`` is the total; ``by_op`` counts per operator.
    On a CPU every value read (``.item()``, ``bool(t)``, ``t.tolist()`` through
    ``_local_scalar_dense``) counts, since on a GPU it would wait; copies to the host and
    data-dependent shapes (``nonzero``, ``masked_select`` …) count only when the tensor lives
    on an accelerator, where they wait.
    """

    def __init__(self) -> None:
        super().__init__()
        self.by_op: collections.Counter[str] = collections.Counter()

    @property
    def count(self) -> int:
        """Number of host syncs seen."""
        return sum(self.by_op.values())

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in ALWAYS:
            self.by_op[func.name()] += 1
        elif func in ON_ACCELERATOR and _on_accelerator(_device_of(args)):
            self.by_op[func.name()] += 1
        elif func is _aten._to_copy.default and _on_accelerator(args[0].device):
            if kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu":
                self.by_op[func.name()] += 1
        elif func is _aten.copy_.default and _on_accelerator(args[1].device) and args[0].device.type == "cpu":
            self.by_op[func.name()] += 1
        return func(*args, **kwargs)

    def __str__(self) -> str:
        detail = ", ".join(f"{op} × {n}" for op, n in self.by_op.most_common())
        return f"{self.count} host sync{'s' if self.count != 1 else ''}" + (f" ({detail})" if detail else "")


def count_syncs() -> SyncCounter:
    """Count host syncs inside a ``with`` block: ``with cu.count_syncs() as syncs: …``.

    Returns:
        A :class:`SyncCounter`; read ``syncs.count`` (and ``syncs.by_op``) after the block.

    Example:
        >>> with count_syncs() as syncs:
        ...     total = torch.ones(3).sum().item()
        >>> syncs.count
        1
    """
    return SyncCounter()

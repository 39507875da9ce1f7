"""The rules behind :func:`course_utils.count_syncs`: which operations make the host wait.

Pure functions and tables, testable on any machine: which ATen operators read values back
(:func:`classify`), whether a copy between host and device blocks (:func:`copy_blocks`), and
which optimizer state PyTorch keeps on the CPU on purpose (:func:`host_held_optimizer_state`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["LABELS", "bind", "classify", "copy_blocks", "host_held_optimizer_state", "is_accelerator"]

_aten = torch.ops.aten

#: What each counted operation is, in a learner's words (the keys of ``SyncCounter.by_op``).
LABELS = {
    "item": ".item()",
    "float": "float(tensor)",
    "int": "int(tensor)",
    "bool": "bool(tensor) or `if tensor:`",
    "index": "a tensor used as a Python index or size",
    "scalar": "a value read to the host inside an operation",
    "tolist": ".tolist()",
    "print": "print(tensor), str, repr or an f-string of a tensor",
    "cpu": ".cpu()",
    "numpy": ".numpy()",
    "to_host": "a copy to the host (.to('cpu'), copy_)",
    "equal": "torch.equal",
    "allclose": "torch.allclose",
    "nonzero": "nonzero, argwhere or torch.where(condition): the output size depends on the values",
    "masked_select": "masked_select",
    "unique": "unique",
    "repeat_interleave": "repeat_interleave without output_size",
    "bincount": "bincount",
    "mask_index": "boolean-mask indexing t[mask]",
    "mask_assign": "boolean-mask assignment t[mask] = ...",
    "h2d_blocking": "a host-to-device copy with non_blocking=False",
    "h2d_pageable": "a host-to-device copy from unpinned memory (non_blocking needs pin_memory)",
    "cuda_synchronize": "torch.cuda.synchronize()",
    "event_synchronize": "event.synchronize()",
    "stream_synchronize": "stream.synchronize()",
}

#: Operators that read a value back to the host (``.item()``, ``bool(t)``, ``torch.equal`` ...).
#: Under ``inference_mode`` the composite ``item`` and ``is_nonzero`` reach a dispatch mode
#: undecomposed, elsewhere as ``_local_scalar_dense``: both are listed.
READS = {
    _aten._local_scalar_dense.default: "scalar",
    _aten.item.default: "item",
    _aten.is_nonzero.default: "bool",
    _aten.equal.default: "equal",
    _aten.allclose.default: "allclose",
}

#: Operators whose output size depends on the values: on a GPU the host waits to learn it.
SHAPE_READS = {
    _aten.nonzero.default: "nonzero",
    _aten.nonzero_numpy.default: "nonzero",
    _aten.argwhere.default: "nonzero",
    _aten.where.default: "nonzero",  # torch.where(condition), undecomposed under inference_mode
    _aten.masked_select.default: "masked_select",
    _aten._unique.default: "unique",
    _aten._unique2.default: "unique",
    _aten.unique_dim.default: "unique",
    _aten.unique_consecutive.default: "unique",
    _aten.unique_dim_consecutive.default: "unique",
    _aten.bincount.default: "bincount",
}

_REPEATS = {_aten.repeat_interleave.Tensor, _aten.repeat_interleave.self_Tensor}
_INDEX = {_aten.index.Tensor}
_INDEX_PUT = {_aten.index_put_.default, _aten.index_put.default, _aten._index_put_impl_.default}
_COPIES = {_aten._to_copy.default, _aten.copy_.default, _aten.to.dtype_layout, _aten.to.device, _aten.to.other}


def is_accelerator(device: torch.device) -> bool:
    """True for a device that runs asynchronously from the host (CUDA, MPS, XPU ...)."""
    return device.type not in ("cpu", "meta")


def copy_blocks(src: torch.device, dst: torch.device, *, non_blocking: bool, host_pinned: bool) -> bool:
    """Whether a copy from ``src`` to ``dst`` makes the host wait for the device.

    A copy between host and accelerator blocks unless it is asked ``non_blocking`` *and* the
    host side is pinned (page-locked): from pageable memory the driver first stages the data,
    synchronously. A copy on one side only (host to host, device to device) never waits.

    Args:
        src: where the data comes from.
        dst: where it goes.
        non_blocking: the copy's ``non_blocking`` flag.
        host_pinned: whether the host-side tensor is in pinned memory (``Tensor.is_pinned()``);
            ``.to("cpu", non_blocking=True)`` pins its output itself.
    """
    if is_accelerator(src) == is_accelerator(dst):
        return False
    return not (non_blocking and host_pinned)


def bind(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of an ATen call by name, from its schema (defaults left out)."""
    names = [a.name for a in func._schema.arguments]
    return {**dict(zip(names, args)), **kwargs}


def _has_bool_index(indices: Any) -> bool:
    return any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices or ())


def _copy(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, None] | None:
    """A blocking copy between host and accelerator: its label (always a real device sync)."""
    a = bind(func, args, kwargs)
    if func is _aten.copy_.default:
        dst_t, src_t = a["self"], a["src"]
        src, dst, out_pinned = src_t.device, dst_t.device, None
    else:
        src_t = a["self"]
        target = a.get("device")
        if func is _aten.to.other:
            target = a["other"].device
        src = src_t.device
        dst = torch.device(target) if target is not None else src
        dst_t, out_pinned = None, bool(a.get("pin_memory")) or bool(a.get("non_blocking"))
    non_blocking = bool(a.get("non_blocking", False))
    if is_accelerator(src) == is_accelerator(dst):
        return None
    if is_accelerator(src):  # device to host; a _to_copy to the CPU with non_blocking pins its output
        pinned = bool(out_pinned) if dst_t is None else dst_t.is_pinned()
        return ("to_host", None) if copy_blocks(src, dst, non_blocking=non_blocking, host_pinned=pinned) else None
    if not copy_blocks(src, dst, non_blocking=non_blocking, host_pinned=src_t.is_pinned()):
        return None
    return ("h2d_pageable" if non_blocking else "h2d_blocking"), None


def classify(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, torch.Tensor | None] | None:
    """Whether the ATen call ``func(*args, **kwargs)`` can make the host wait, and how.

    Returns:
        None when the call never waits. Otherwise its key in :data:`LABELS` and the tensor whose
        device decides (a read of a CPU tensor on a GPU machine waits for nothing), or ``None``
        in its place for a copy between host and accelerator that blocks: always a real sync.
    """
    key = READS.get(func) or SHAPE_READS.get(func)
    if key is None and func in _INDEX and _has_bool_index(args[1] if len(args) > 1 else kwargs.get("indices")):
        key = "mask_index"
    elif key is None and func in _INDEX_PUT and _has_bool_index(args[1] if len(args) > 1 else kwargs.get("indices")):
        key = "mask_assign"
    elif key is None and func in _REPEATS and bind(func, args, kwargs).get("output_size") is None:
        key = "repeat_interleave"
    elif key is None and func in _COPIES:
        return _copy(func, args, kwargs)
    if key is None:
        return None
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)
    return None if first is None else (key, first)


#: Optimizer state that PyTorch keeps on the CPU on purpose unless ``capturable`` or ``fused``
#: ("special device hosting for step" in ``torch/optim/adam.py``): a kernel launch per counter
#: would cost more than a read of a host scalar. ASGD is the exception (its counters follow the
#: parameters).
HOST_STATE_KEYS = ("step", "mu_product")


def host_held_optimizer_state(optimizer: torch.optim.Optimizer) -> Iterator[torch.Tensor]:
    """The 0-d CPU tensors of ``optimizer``'s state that stay on the CPU on every machine.

    Reading them (Adam, AdamW, NAdam, RAdam … call ``step.item()`` on every parameter, every
    step) waits for nothing, even when the parameters are on a GPU.
    """
    if isinstance(optimizer, torch.optim.ASGD):
        return
    for group in optimizer.param_groups:
        if group.get("capturable") or group.get("fused"):
            continue
        for p in group["params"]:
            state = optimizer.state.get(p) or {}
            for key in HOST_STATE_KEYS:
                value = state.get(key)
                if isinstance(value, torch.Tensor) and value.dim() == 0 and value.device.type == "cpu":
                    yield value

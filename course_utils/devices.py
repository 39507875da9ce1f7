"""Which device a measurement runs on, checked before any work, and the device-dependent helpers.

:func:`choose_device` picks the best device there is; :func:`check_device` turns a ``device=``
argument into a ``torch.device`` once this machine has it (``"cuda"`` on a laptop says so in one
sentence, before any arm runs); :func:`synchronize` waits for queued work; :func:`autocast` is
the forward pass's mixed-precision context. Re-exported by :mod:`course_utils.env`.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import torch

__all__ = ["autocast", "check_device", "choose_device", "synchronize"]


def choose_device() -> torch.device:
    """Return the best available device: CUDA, then Apple MPS, then the CPU.

    Under ``torchrun`` (``LOCAL_RANK`` set) with CUDA, the device is ``cuda:<LOCAL_RANK>``, so
    each process of a distributed run gets its own GPU; this does not change the current CUDA
    device (call ``torch.cuda.set_device`` for that). Without ``LOCAL_RANK`` it is ``cuda``.

    Raises:
        ValueError: ``LOCAL_RANK`` is not a whole number, or names a GPU that is not visible.
    """
    if torch.cuda.is_available():
        rank = os.environ.get("LOCAL_RANK", "").strip()
        if not rank:
            return torch.device("cuda")
        try:
            index = int(rank)
        except ValueError:
            raise ValueError(f"LOCAL_RANK={rank!r} is not a whole number; torchrun sets it to 0, 1, ...") from None
        count = torch.cuda.device_count()
        if not 0 <= index < count:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            shown = f", CUDA_VISIBLE_DEVICES={visible}" if visible is not None else ""
            raise ValueError(
                f"LOCAL_RANK={index} but only {count} CUDA device(s) are visible (cuda:0 to cuda:{count - 1}"
                f"{shown}); start at most {count} process(es) per node"
            )
        return torch.device("cuda", index)
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def check_device(device: torch.device | str | int | None, argument: str = "device") -> torch.device:
    """The device a measurement runs on: :func:`choose_device` for None, else ``device`` once this machine has it.

    Called before any work, so that ``device="cuda"`` on a machine without a GPU says so in one
    sentence instead of failing deep inside torch.

    Args:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, a ``torch.device``, or None.
        argument: the name of the argument, for the message.

    Raises:
        TypeError: not a device, a string or None.
        ValueError: a string that names no device, or a CUDA / MPS device this machine does not have.
    """
    if device is None:
        return choose_device()
    if isinstance(device, bool) or not isinstance(device, (str, torch.device, int)):
        raise TypeError(f"{argument} is a device such as 'cpu', 'cuda' or 'mps' (None: the best there is), "
                        f"got {device!r}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as e:
        raise ValueError(f"{argument}={device!r} names no device ({e}); use 'cpu', 'cuda' or 'mps', "
                         f"or leave {argument}=None") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        have = "no CUDA GPU (torch.cuda.is_available() is False)"
    elif dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        have = f"only {count} CUDA device(s) visible (cuda:0 to cuda:{count - 1})"
    elif dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        have = "no Apple MPS device (torch.backends.mps.is_available() is False)"
    else:
        return dev
    try:
        fallback = str(choose_device())
    except ValueError:  # a LOCAL_RANK that names no GPU: choose_device says so itself
        fallback = "the best device there is"
    raise ValueError(f"{argument}='{dev}' was asked for, but this machine has {have}; "
                     f"leave {argument}=None to use {fallback}")


def synchronize(device: torch.device | str) -> None:
    """Wait until all queued work on ``device`` has finished.

    CUDA: that device (the current one for a bare ``"cuda"``); MPS: the Metal queue; CPU: a
    no-op (CPU ops finish before they return); another accelerator: ``torch.accelerator``.
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
    elif device.type != "cpu":
        accelerator = getattr(torch, "accelerator", None)
        current = accelerator.current_accelerator() if accelerator is not None else None
        if accelerator is not None and current is not None and current.type == device.type:
            accelerator.synchronize(device)


def autocast(device: torch.device | str, dtype: torch.dtype | None) -> contextlib.AbstractContextManager[Any]:
    """The autocast context for a forward pass: ``nullcontext()`` when no autocast is asked for.

    Building ``torch.autocast(..., enabled=False)`` for the fp32 baseline costs time in every
    step and fails on older torch for MPS; the baseline gets a plain ``nullcontext`` instead.

    Args:
        device: the device the forward pass runs on (its type is autocast's device type).
        dtype: ``torch.float16`` or ``torch.bfloat16``; None or ``torch.float32`` for no autocast.

    Returns:
        A context manager.

    Raises:
        ValueError: ``dtype`` is another dtype.
    """
    if dtype is None or dtype == torch.float32:
        return contextlib.nullcontext()
    if dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"autocast dtype must be torch.float16, torch.bfloat16 or None (fp32), got {dtype}")
    return torch.autocast(torch.device(device).type, dtype=dtype)

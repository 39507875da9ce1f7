"""The reads the dispatcher never sees, counted by wrapping them while a sync counter is active.

``.item()``, ``.tolist()``, ``bool(t)``, ``print(t)``, ``.numpy()``, ``.cpu()`` of a CPU tensor and
CUDA's ``synchronize()`` (device, event, stream) never reach a ``TorchDispatchMode``, so
:class:`~course_utils.counters.syncs.SyncCounter` cannot see them there. :func:`activate` wraps
those methods when the first counter enters and :func:`deactivate` puts the originals back when
the last one leaves: nothing is patched while no counter is active. A wrapped call counts once,
for each counter active on the calling thread, however many operators it runs.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, Protocol

import torch

__all__ = ["ACTIVE", "Counter", "activate", "deactivate"]


class Counter(Protocol):
    """What a wrapped read uses of a counter (:class:`~course_utils.counters.syncs.SyncCounter`)."""

    _thread: int
    _depth: int
    _saw_accelerator: bool
    _host: Any

    def _kind(self, t: torch.Tensor) -> str | None: ...

    def _record(self, key: str, kind: str | None) -> None: ...


#: The counters inside their ``with`` block, in the order they entered.
ACTIVE: list[Counter] = []
_SAVED: dict[tuple[Any, str], Any] = {}
_MISSING = object()


def _alias(t: torch.Tensor) -> torch.Tensor:
    """A new tensor object on ``t``'s data, made outside no_grad/inference_mode so it behaves as ``t``."""
    with contextlib.nullcontext() if t.is_inference() else torch.inference_mode(False), torch.enable_grad():
        return t.view_as(t)


def _read(key: str, *, host_result: bool = False, device_wait: bool = False) -> Callable[[Any], Callable[..., Any]]:
    """Wrap a method so that a call counts once, as ``key``, for each counter on this thread.

    A ``torch.Tensor`` method is decided by its tensor; with ``device_wait``, a CUDA synchronize
    call always counts. With ``host_result`` what it returns is host-held (``.cpu()``).
    """

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            here = [c for c in ACTIVE if c._thread == threading.get_ident() and c._depth == 0]
            kinds = ["device" if device_wait else c._kind(args[0]) for c in here]
            for c in here:
                c._depth += 1
            try:
                out = original(*args, **kwargs)
            finally:
                for c in here:
                    c._depth -= 1
            for c, kind in zip(here, kinds):
                c._saw_accelerator |= device_wait
                c._record(key, kind)
            if host_result and here and isinstance(out, torch.Tensor):
                out = _alias(out) if out is args[0] else out  # .cpu() of a CPU tensor: mark a copy
                for c in here:
                    c._host[out] = True
            return out

        call.__wrapped__ = original  # type: ignore[attr-defined]
        return call

    return wrap


_TENSOR_READS = {
    "item": _read("item"), "tolist": _read("tolist"), "__bool__": _read("bool"), "__float__": _read("float"),
    "__int__": _read("int"), "__index__": _read("index"), "__repr__": _read("print"), "__format__": _read("print"),
    "numpy": _read("numpy", host_result=True), "cpu": _read("cpu", host_result=True),
}


def _targets() -> list[tuple[Any, str, Callable[[Any], Callable[..., Any]]]]:
    return [(torch.Tensor, name, w) for name, w in _TENSOR_READS.items()] + [
        (torch.cuda, "synchronize", _read("cuda_synchronize", device_wait=True)),
        (torch.cuda.Event, "synchronize", _read("event_synchronize", device_wait=True)),
        (torch.cuda.Stream, "synchronize", _read("stream_synchronize", device_wait=True))]


def _install() -> None:
    for owner, name, wrap in _targets():
        _SAVED[owner, name] = owner.__dict__.get(name, _MISSING)
        setattr(owner, name, wrap(getattr(owner, name)))


def _uninstall() -> None:
    for (owner, name), saved in _SAVED.items():
        if saved is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, saved)
    _SAVED.clear()


def activate(counter: Counter) -> None:
    """Count wrapped reads for ``counter`` from now on (the wrappers go in with the first active counter)."""
    if not ACTIVE:
        _install()
    ACTIVE.append(counter)


def deactivate(counter: Counter) -> None:
    """Stop counting for ``counter``; the last one to leave puts the original methods back."""
    if counter in ACTIVE:
        ACTIVE.remove(counter)
    if not ACTIVE:
        _uninstall()

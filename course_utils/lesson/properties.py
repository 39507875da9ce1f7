"""Property checks for test cells: what a correct answer must do whatever its inputs, in a learner's words.

A hidden test compares outputs with a reference; these check what outputs do not show, the same
way in every lesson:

- :func:`~course_utils.lesson.restores.assert_restores` — global and caller state (grad mode, anomaly mode, the garbage
  collector, the RNG, thread count, default dtype, a model's train/eval flags, its hooks and
  ``requires_grad``) is as it was after the call returns *and* after it raises, also when the
  state was not the default before (restoring to the default is not restoring).
- :func:`assert_follows_device` / :func:`assert_follows_dtype` — outputs follow the inputs'
  device (``meta`` stands in for a GPU on a CPU-only machine) and dtype, not the machine's.
- :func:`assert_no_mutation` — the inputs are unchanged and not returned as views.
- :func:`assert_syncs_at_most` — host-device synchronisations within a bound
  (:func:`~course_utils.counters.syncs.count_syncs`).
- :func:`assert_keeps_no_graph` — no tensor carrying an autograd graph is alive after the call.
- :func:`nested` and :data:`NORMS` — module trees that are not one flat ``Sequential``.

The spy that sees ``torch.ops.aten`` calls too is :func:`course_utils.lesson.checks.spy` with ``"aten::…"`` targets.
"""

from __future__ import annotations

import copy
import gc
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..counters.syncs import count_syncs

__all__ = ["NORMS", "assert_follows_device", "assert_follows_dtype", "assert_keeps_no_graph",
           "assert_no_mutation", "assert_syncs_at_most", "nested", "tensors_in"]

#: Every normalisation class a "walk the model" answer must find (SyncBatchNorm runs as BatchNorm on one process).
NORMS: tuple[type[nn.Module], ...] = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm,
                                      nn.LayerNorm, nn.GroupNorm, nn.InstanceNorm1d, nn.InstanceNorm2d)

def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in a value: nested lists, tuples, dicts, a module's parameters and buffers."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, nn.Module):
        return [*value.parameters(), *value.buffers()]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []


def _move(value: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        out = fn(value.detach())
        return out.requires_grad_(value.requires_grad) if out.is_floating_point() else out
    if isinstance(value, nn.Module):
        return copy.deepcopy(value)._apply(fn)
    if isinstance(value, dict):
        return {k: _move(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_move(v, fn) for v in value)
    return value


def assert_follows_device(fn: Callable[..., Any], *args: Any, device: torch.device | str | None = None,
                          name: str = "your function", **kwargs: Any) -> Any:
    """Call ``fn`` with every tensor (and module) argument on another device; its outputs must be there too.

    ``device`` defaults to CUDA where there is one, else ``meta`` (shapes and dtypes, no data): an
    answer that names a device, asks the machine (``"cuda" if torch.cuda.is_available()``) or makes
    a tensor without ``device=`` then mixes devices or returns a CPU tensor. Returns ``fn``'s output.
    """
    target = torch.device(device) if device is not None else \
        torch.device("cuda") if torch.cuda.is_available() else torch.device("meta")
    moved = [_move(a, lambda t: t.to(target)) for a in args]
    moved_kw = {k: _move(v, lambda t: t.to(target)) for k, v in kwargs.items()}
    try:
        out = fn(*moved, **moved_kw)
    except (RuntimeError, NotImplementedError) as e:
        raise AssertionError(f"{name} fails when its inputs are on {target} ({type(e).__name__}: {str(e)[:200]}): "
                             "take the device from the inputs (x.device), never from the machine or a "
                             "constant, and create new tensors with device=x.device") from e
    wrong = [t for t in tensors_in(out) if t.device.type != target.type]
    if wrong:
        raise AssertionError(f"for inputs on {target}, {name} returned a tensor on {wrong[0].device}: take the device "
                             "from the inputs (x.device) and create new tensors with device=x.device")
    return out


def assert_follows_dtype(fn: Callable[..., Any], *args: Any, dtype: torch.dtype = torch.float64,
                         name: str = "your function", **kwargs: Any) -> Any:
    """Call ``fn`` with every floating tensor argument in ``dtype``; its floating outputs must be ``dtype`` too."""
    def cast(t: torch.Tensor) -> torch.Tensor:
        return t.to(dtype) if t.is_floating_point() else t

    out = fn(*[_move(a, cast) for a in args], **{k: _move(v, cast) for k, v in kwargs.items()})
    wrong = [t for t in tensors_in(out) if t.is_floating_point() and t.dtype != dtype]
    if wrong:
        raise AssertionError(f"for {dtype} inputs, {name} returned a {wrong[0].dtype} tensor: keep the input's "
                             "dtype (x.dtype, or build from x) instead of a fixed one")
    return out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b) or (
        a.is_floating_point() and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())))


def assert_no_mutation(fn: Callable[..., Any], *args: Any, views_ok: bool = False,
                       name: str = "your function", **kwargs: Any) -> Any:
    """Call ``fn``; its arguments must be unchanged after it: tensors, lists, dicts, NumPy arrays.

    Tensors are found inside lists, dicts and modules too; a list sorted in place or a NumPy
    array's view sorted fails.

    Unless ``views_ok``, no output tensor may share memory with an input (a view or the input
    itself returned: the caller's later change to one changes the other). Returns ``fn``'s output.
    """
    inputs = tensors_in(list(args) + list(kwargs.values()))
    copies = [t.detach().clone() for t in inputs]
    plain = [(k, v, _plain_copy(v)) for k, v in [*enumerate(args), *kwargs.items()]]
    out = fn(*args, **kwargs)
    for key, value, before in plain:
        if before is not _UNCOPIED and not _plain_equal(value, before):
            raise AssertionError(f"{name} changed its argument {key!r} ({type(value).__name__}) in place: work on a "
                                 "copy (sorted(x), list(x), x.copy()); the caller still needs the original")
    for i, (t, c) in enumerate(zip(inputs, copies)):
        if not _same(t.detach(), c):
            raise AssertionError(f"{name} changed its input (tensor {i} of the arguments, shape {tuple(t.shape)}): "
                                 "work on a copy or build new tensors; the caller still needs the original")
    if not views_ok:
        held = {t.untyped_storage().data_ptr() for t in inputs if t.numel() and t.device.type != "meta"}
        for t in tensors_in(out):
            if t.numel() and t.device.type != "meta" and t.untyped_storage().data_ptr() in held:
                raise AssertionError(f"{name} returned its input (or a view of it) instead of a new tensor: "
                                     "the caller's next change to one would change the other; return a new tensor")
    return out


_UNCOPIED = object()


def _plain_copy(value: Any) -> Any:
    """A deep copy of a list, tuple, dict or NumPy array without tensors in it; else a marker (checked as tensors)."""
    if isinstance(value, (list, tuple, dict)) and not tensors_in(value) or type(value).__module__ == "numpy":
        try:
            return copy.deepcopy(value)
        except Exception:  # noqa: BLE001 - what cannot be copied is not compared
            return _UNCOPIED
    return _UNCOPIED


def _plain_equal(a: Any, b: Any) -> bool:
    if type(a).__module__ == "numpy":
        import numpy as np

        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")) if hasattr(a, "dtype") else a == b
    try:
        return bool(a == b) or repr(a) == repr(b)  # NaNs compare unequal to themselves; their repr does not
    except Exception:  # noqa: BLE001 - an ambiguous comparison: compare the text
        return repr(a) == repr(b)


def assert_syncs_at_most(call: Callable[[], Any], limit: int, *, device: torch.device | str | None = None,
                         name: str = "your code") -> Any:
    """Run ``call()`` under :func:`~course_utils.counters.syncs.count_syncs`; fail past ``limit`` device waits."""
    with count_syncs(device) as counter:
        out = call()
    if counter.count > limit:
        raise AssertionError(f"{name} waited for the device {counter.count} times (at most {limit} allowed): "
                             f"{counter}. Each .item(), .tolist(), print or Python `if` on a tensor waits; keep "
                             "values on the device and read them once, at the end")
    return out


class _GraphRecorder(TorchFunctionMode):
    """Weak references to every tensor made inside the mode that carries an autograd graph."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[tuple[weakref.ref[torch.Tensor], str]] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tensors_in(out if isinstance(out, (list, tuple)) else [out]):
            if t.grad_fn is not None:
                self.made.append((weakref.ref(t), f"{tuple(t.shape)} from {type(t.grad_fn).__name__}"))
        return out


def assert_keeps_no_graph(call: Callable[[], Any], *, allow: int = 0, name: str = "your code") -> Any:
    """Run ``call()``; fail if more than ``allow`` tensors it made that carry an autograd graph are still alive.

    A loop that keeps each step's output or un-detached loss (``losses.append(loss)``) keeps every
    step's graph and activations in memory. The value ``call`` returns counts too: return numbers or
    detached tensors. Returns what ``call()`` returned.
    """
    recorder = _GraphRecorder()
    with recorder:
        out = call()
    gc.collect()
    alive = [what for ref, what in recorder.made if ref() is not None]
    if len(alive) > allow:
        raise AssertionError(f"{len(alive)} tensors that carry an autograd graph are still alive after {name} "
                             f"finished (e.g. {alive[0]}): each one keeps its graph and activations in memory. "
                             "Keep loss.item() or loss.detach(), not the loss or the output itself")
    return out


class _Nest(nn.Module):
    """A module wrapped in containers ``depth`` deep: Sequential > ModuleList > ModuleDict > ..."""

    _inner: nn.Module  # set with object.__setattr__: called, not registered a second time

    def __init__(self, inner: nn.Module, depth: int) -> None:
        super().__init__()
        box: nn.Module = inner
        wraps: list[Callable[[nn.Module], nn.Module]] = [
            nn.Sequential, lambda m: nn.ModuleList([m]), lambda m: nn.ModuleDict({"block": m})]
        for level in range(depth):
            box = wraps[level % 3](box)
        self.body = box
        object.__setattr__(self, "_inner", inner)  # to call it, not a second registration

    def forward(self, *args: Any) -> Any:
        return self._inner(*args)


def nested(module: nn.Module, depth: int = 2) -> nn.Module:
    """``module`` inside ``depth`` levels of containers (Sequential, ModuleList, ModuleDict); runs as ``module``."""
    return _Nest(module, depth)

"""Helpers for test cells: readable assertion messages for tensors and gradients, and a call spy.

:func:`spy` watches which functions run while a block runs (``sys.setprofile``), by their code
rather than their names, so an alias import (``from torch.utils.checkpoint import checkpoint as
ck``) or a module reached another way is still seen. A test cell uses it both ways: to check that
the learner's code called what the exercise asks for, and that a re-implementation did not call
the function it re-implements.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import CodeType, FrameType, ModuleType
from typing import Any

import torch
from torch import nn

from .opwatch import OpWatch

__all__ = ["Calls", "assert_close", "assert_grads_close", "norm_error", "rel_error", "spy"]

#: What :func:`spy` can watch: a function (or method, ``functools.partial``, builtin such as
#: ``torch.tensor``), a module (every function defined in it), or a dotted name to import.
Target = Callable[..., Any] | ModuleType | str


def rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Largest relative error ``|a - e| / max(|a|, |e|, 1e-8)`` over all elements."""
    a, e = torch.as_tensor(actual).double(), torch.as_tensor(expected).double()
    return float(((a - e).abs() / torch.maximum(torch.maximum(a.abs(), e.abs()),
                                               torch.tensor(1e-8, dtype=torch.float64))).max())


def norm_error(actual: object, expected: object) -> float:
    """Norm-wise relative error ``‖a − e‖ / ‖e‖`` (Frobenius norms; 0 when both are zero).

    Unlike :func:`rel_error` (an element-wise maximum, which reaches 2 as soon as one element near
    zero flips sign), it says how large the difference is against the whole tensor: the measure to
    print when two gradients are "the same up to rounding". Tensors, numbers or lists of tensors
    (then the norms run over all of them together).
    """
    def flat(x: object) -> torch.Tensor:
        if isinstance(x, (list, tuple)):
            return torch.cat([torch.as_tensor(t).detach().double().reshape(-1).cpu() for t in x]) if x \
                else torch.zeros(0, dtype=torch.float64)
        return torch.as_tensor(x).detach().double().reshape(-1).cpu()
    a, e = flat(actual), flat(expected)
    if a.shape != e.shape:
        raise ValueError(f"norm_error needs equal sizes, got {tuple(a.shape)} and {tuple(e.shape)}")
    diff, ref = float(torch.linalg.vector_norm(a - e)), float(torch.linalg.vector_norm(e))
    if ref == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / ref


def assert_close(actual: object, expected: object, *, rtol: float = 1e-5, atol: float = 1e-8,
                 name: str = "value") -> None:
    """Assert that two numbers or tensors agree, with a message a learner can act on.

    Raises:
        AssertionError: shapes differ, or values differ beyond ``atol + rtol * |expected|``;
            the message gives both values (or the worst element), the difference and the tolerance.
    """
    # Python numbers become float64 (torch.as_tensor would round them to float32).
    def tensor(x: object) -> torch.Tensor:
        return (x if isinstance(x, torch.Tensor) else torch.as_tensor(x, dtype=torch.float64)).detach().cpu()

    a, e = tensor(actual), tensor(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{name}: shape {tuple(a.shape)} but expected {tuple(e.shape)}")
    a64, e64 = a.double(), e.double()
    bad = ~torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=False)
    if bool(bad.any()):
        diff = (a64 - e64).abs()
        if a.ndim == 0:
            raise AssertionError(f"{name}: got {a.item():.6g}, expected {e.item():.6g} "
                                 f"(difference {diff.item():.3g}; tolerance atol={atol:g}, rtol={rtol:g})")
        idx = tuple(int(i) for i in torch.nonzero(bad)[0])
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {a.numel()} elements differ; first at index {idx}: got "
            f"{a64[idx].item():.6g}, expected {e64[idx].item():.6g}; largest difference "
            f"{diff.max().item():.3g} (tolerance atol={atol:g}, rtol={rtol:g})")


def assert_grads_close(model: nn.Module | Iterable[torch.nn.Parameter],
                       reference: nn.Module | Iterable[torch.nn.Parameter], *,
                       rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert that two models (or parameter lists) hold the same gradients, parameter by parameter."""
    def named(m: nn.Module | Iterable[torch.nn.Parameter]) -> list[tuple[str, torch.nn.Parameter]]:
        return list(m.named_parameters()) if isinstance(m, nn.Module) else [
            (str(i), p) for i, p in enumerate(m)]

    got, want = named(model), named(reference)
    if len(got) != len(want):
        raise AssertionError(f"{len(got)} parameters but the reference has {len(want)}")
    for (name, p), (_, q) in zip(got, want):
        if (p.grad is None) != (q.grad is None):
            raise AssertionError(f"gradient of {name}: {'None' if p.grad is None else 'set'}, "
                                 f"reference {'None' if q.grad is None else 'set'}")
        if p.grad is not None:
            assert_close(p.grad, q.grad, rtol=rtol, atol=atol, name=f"gradient of {name}")


class Calls:
    """What a :func:`spy` saw: the names of the watched functions that ran, in call order.

    ``"yours" in calls`` and :meth:`count` read it; :meth:`assert_called` and
    :meth:`assert_not_called` turn it into a test with a message the learner can act on.
    """

    def __init__(self, names: list[str]) -> None:
        self.watched: list[str] = names
        self.calls: list[str] = []

    @property
    def fired(self) -> bool:
        """Whether any watched function ran."""
        return bool(self.calls)

    def count(self, name: str) -> int:
        """How many times the watched function ``name`` was entered (a generator: each resume)."""
        return self.calls.count(name)

    def __contains__(self, name: object) -> bool:
        return name in self.calls

    def __repr__(self) -> str:
        return f"Calls(watched={self.watched}, calls={self.calls})"

    def _known(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        unknown = [n for n in names if n not in self.watched]
        if unknown:
            raise KeyError(f"the spy does not watch {unknown}; it watches {self.watched}")
        return names

    def assert_called(self, name: str, message: str | None = None) -> None:
        """Fail unless ``name`` ran.

        For the learner's own function this is the check that the spy works at all (the default
        message then says so); for anything else, that the exercise's tool was used.
        """
        self._known([name])
        if name not in self.calls:
            raise AssertionError(message or (
                f"{name} never ran while the test watched: the exercise expects your code to call it"
                if name != "yours" else
                "the test's call detector saw nothing: run this cell again after your answer cell"))

    def assert_not_called(self, *names: str, message: str | None = None) -> None:
        """Fail when any of ``names`` ran (every watched function when none is named)."""
        forbidden = self._known(names) if names else self.watched
        ran = sorted({n for n in self.calls if n in forbidden})
        if ran:
            raise AssertionError(message or (
                f"your code calls {', '.join(ran)}, which this exercise asks you to write yourself "
                "(it is the function being re-implemented): remove the call and compute it in your own code"))


def _resolve(dotted: str) -> Any:
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ValueError(f"cannot import {dotted!r}: give a function, a module or a dotted name such as "
                     "'torch.utils.checkpoint.checkpoint'")


def _default_name(obj: Any) -> str:
    """``cu.<name>`` for what ``course_utils`` exports, else the module-qualified name."""
    cu = sys.modules.get("course_utils")
    name = getattr(obj, "__name__", None)
    if cu is not None and name and vars(cu).get(name) is obj:  # not getattr: a moved 0.1 name would warn
        return f"cu.{name}"
    # a builtin's __qualname__ can name a private class (torch.tensor: _VariableFunctionsClass.tensor)
    qualname = name if inspect.isbuiltin(obj) else getattr(obj, "__qualname__", name)
    return f"{getattr(obj, '__module__', None) or '?'}.{qualname}"


def _codes(target: Target, name: str | None) -> Iterator[tuple[str, CodeType | Callable[..., Any]]]:
    """(name, code object or builtin) for each thing to watch in ``target``."""
    if isinstance(target, str) and target.startswith("aten::"):
        yield name or target, target  # an operator pattern: watched by OpWatch
        return
    if isinstance(target, str):
        name, target = name or target, _resolve(target)
    if isinstance(target, ModuleType):
        prefix = name or target.__name__
        for attr, f in sorted(vars(target).items()):
            if inspect.isfunction(f) and f.__module__ == target.__name__:
                yield f"{prefix}.{attr}", inspect.unwrap(f).__code__
        return
    name = name or _default_name(target)
    f: Any = target
    while isinstance(f, functools.partial):
        f = f.func
    f = getattr(f, "__func__", f)  # a bound or class method
    f = inspect.unwrap(f)  # a decorated function: the wrapper's code may be shared, the inner's is its own
    if hasattr(f, "__code__"):
        yield name, f.__code__
    elif callable(f) and not isinstance(f, type):
        yield name, f  # a builtin (torch.tensor): seen through the profiler's "c_call" events
    else:
        raise TypeError(f"cannot watch {target!r}: give a function, a method, a builtin, a module or a dotted name")


@contextmanager
def spy(*targets: Target | Mapping[str, Target], **named: Target) -> Iterator[Calls]:
    """Watch which functions run inside the ``with`` block, by their code, whatever they are called there.

    Args:
        *targets: functions, builtins, modules or dotted names (``"torch.utils.checkpoint.checkpoint"``),
            each named ``cu.<name>`` when ``course_utils`` exports it, else by its module-qualified
            name; or mappings from a name of your choice to a target.
        **named: targets under the names given, e.g. ``yours=choose_amp_dtype``.

    An ``"aten::<op>"`` target (``fnmatch`` patterns allowed: ``"aten::_scaled_dot_product*"``) is
    an operator, seen however it is reached: through its Python API, ``torch.ops.aten`` or a
    cached ``torch._C`` function (:class:`~course_utils.lesson.opwatch.OpWatch`).

    Yields:
        A :class:`Calls` record, filled while the block runs.

    The profiler in place before (``sys.getprofile()``) is put back afterwards, and a spy inside a
    spy feeds both. Only the calling thread is watched (not DataLoader workers).

    Example::

        with cu.spy("torch.utils.checkpoint.checkpoint", yours=CheckpointedSequential.forward) as seen:
            net(x).sum().backward()
        seen.assert_called("yours")
        seen.assert_called("torch.utils.checkpoint.checkpoint", "nothing was checkpointed: ...")
    """
    watch: list[tuple[str, CodeType | Callable[..., Any]]] = []
    for target in targets:
        items = target.items() if isinstance(target, Mapping) else [(None, target)]
        for name, t in items:
            watch += _codes(t, name)
    for name, t in named.items():
        watch += _codes(t, name)
    codes = {c: n for n, c in watch if isinstance(c, CodeType)}
    ops = {n: c for n, c in watch if isinstance(c, str)}
    builtins = {id(c): n for n, c in watch if not isinstance(c, (CodeType, str))}
    record = Calls(list(dict.fromkeys(n for n, _ in watch)))
    previous = sys.getprofile()

    def profiler(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            record.calls.append(codes[frame.f_code])
        elif event == "c_call" and id(arg) in builtins:
            record.calls.append(builtins[id(arg)])
        if chained is not None:
            chained(frame, event, arg)

    # an enclosing spy keeps seeing its calls; any other profiler is paused and put back
    chained = previous if getattr(previous, "_course_spy", False) else None
    profiler._course_spy = True  # type: ignore[attr-defined]
    sys.setprofile(profiler)
    try:
        if ops:
            with OpWatch(ops, record.calls):
                yield record
        else:
            yield record
    finally:
        sys.setprofile(previous)

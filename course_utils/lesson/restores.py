"""Global and caller state a test cell compares before and after the learner's code: :func:`assert_restores`.

Grad mode, anomaly mode, the garbage collector, the RNG, the thread count, the default dtype, and
a model's train/eval flags, hooks and ``requires_grad`` must be as they were after the call returns
*and* after it raises, also when they were not the default before (restoring to the default is
not restoring). Part of the property checks of :mod:`course_utils.lesson.properties`.
"""

from __future__ import annotations

import contextlib
import gc
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import nn

__all__ = ["STATE", "assert_restores", "restoring"]

_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _modules(modules: Sequence[nn.Module]) -> list[tuple[str, nn.Module]]:
    return [(f"{i}.{name}" if len(modules) > 1 else name or "the model", m)
            for i, top in enumerate(modules) for name, m in top.named_modules()]


def _flip_train(modules: Sequence[nn.Module]) -> None:
    for top in modules:  # eval at the top, training in every other submodule below: a mix no default restores
        top.eval()
        for i, m in enumerate(top.modules()):
            m.training = bool(i % 2)


def _flip_hooks(modules: Sequence[nn.Module]) -> None:
    for top in modules:
        for m in list(top.modules())[:2]:
            m.register_forward_hook(lambda *_: None)
            m.register_forward_pre_hook(lambda *_: None)


def _flip_requires_grad(modules: Sequence[nn.Module]) -> None:
    for top in modules:
        for p in list(top.parameters())[:1]:
            p.requires_grad_(False)


#: name -> (what it is in words, read it, put the non-default value in place or None).
STATE: dict[str, tuple[str, Callable[[Sequence[nn.Module]], Any], Callable[[Sequence[nn.Module]], object] | None]] = {
    "grad": ("grad mode (torch.is_grad_enabled())", lambda _: torch.is_grad_enabled(),
             lambda _: torch.set_grad_enabled(not torch.is_grad_enabled())),
    "anomaly": ("anomaly mode (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())",
                lambda _: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
                lambda _: torch._C.set_anomaly_enabled(True, False)),  # on, but not checking NaNs
    "gc": ("the garbage collector (gc.isenabled())", lambda _: gc.isenabled(), lambda _: gc.disable()),
    "rng": ("the global random state (torch and random)",
            lambda _: (hash(torch.get_rng_state().numpy().tobytes()), hash(str(random.getstate()))), None),
    "threads": ("the thread count (torch.get_num_threads())", lambda _: torch.get_num_threads(),
                lambda _: torch.set_num_threads(torch.get_num_threads() + 1)),
    "dtype": ("the default dtype (torch.get_default_dtype())", lambda _: torch.get_default_dtype(),
              lambda _: torch.set_default_dtype(torch.float64)),
    "train": ("the model's train/eval flags (module.training, every submodule)",
              lambda ms: [(n, m.training) for n, m in _modules(ms)], _flip_train),
    "hooks": ("the hooks installed on the model (forward, pre-forward, backward)",
              lambda ms: [(n, d, tuple(getattr(m, d))) for n, m in _modules(ms) for d in _HOOK_DICTS], _flip_hooks),
    "requires_grad": ("the parameters' requires_grad flags",
                      lambda ms: [(n, p.requires_grad) for top in ms for n, p in top.named_parameters()],
                      _flip_requires_grad),
    "autocast": ("autocast (torch.is_autocast_enabled and its dtype, on the CPU and CUDA)",
                 lambda _: _autocast(), None),
}

_AUTOCAST_DEVICES = ("cpu", "cuda")


def _autocast() -> list[tuple[str, bool, torch.dtype]]:
    if not hasattr(torch, "get_autocast_dtype"):  # torch < 2.4: the per-device API is missing
        return []
    return [(d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in _AUTOCAST_DEVICES]


def _snapshot(keys: Sequence[str], modules: Sequence[nn.Module]) -> dict[str, Any]:
    return {k: STATE[k][1](modules) for k in keys}


def _first_difference(before: Any, after: Any) -> str:
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for b, a in zip(before, after):
            if b != a:
                return f"{b} before, {a} after"
    return f"{before} before, {after} after" if len(repr(before)) < 200 else "changed"


def restoring(*modules: nn.Module) -> contextlib.AbstractContextManager[None]:
    """Context manager for a test cell: whatever the block does, put every :data:`STATE` setting back.

    Grad and anomaly mode, gc, the RNGs, threads, the default dtype, autocast, and each module's
    train/eval flags, hooks and ``requires_grad``; so a failing answer never breaks a later cell.
    """
    return _kept(modules)


@contextlib.contextmanager
def _kept(modules: Sequence[nn.Module]) -> Iterator[None]:
    saved = (torch.is_grad_enabled(), torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(),
             gc.isenabled(), torch.get_rng_state(), random.getstate(), torch.get_num_threads(),
             torch.get_default_dtype(), _autocast())
    mods = [(m, m.training, {d: dict(getattr(m, d)) for d in _HOOK_DICTS}) for top in modules for m in top.modules()]
    grads = [(p, p.requires_grad) for top in modules for p in top.parameters()]
    try:
        yield
    finally:
        torch.set_grad_enabled(saved[0])
        torch._C.set_anomaly_enabled(saved[1], saved[2])
        (gc.enable if saved[3] else gc.disable)()
        torch.set_rng_state(saved[4])
        random.setstate(saved[5])
        torch.set_num_threads(saved[6])
        torch.set_default_dtype(saved[7])
        for device, enabled, dtype in saved[8]:
            torch.set_autocast_enabled(device, enabled)
            torch.set_autocast_dtype(device, dtype)
        for m, training, hooks in mods:
            m.training = training
            for d, h in hooks.items():
                getattr(m, d).clear()
                getattr(m, d).update(h)
        for p, flag in grads:
            p.requires_grad_(flag)


def assert_restores(call: Callable[[], Any], *, state: Sequence[str] = ("grad", "anomaly", "gc", "train", "hooks"),
                    modules: Sequence[nn.Module] = (), raises: Callable[[], Any] | None = None,
                    flip: Sequence[str] | None = None, name: str = "your code") -> Any:
    """Assert that ``call()`` leaves every setting in ``state`` as it found it, on return and on raise.

    Args:
        call: runs the learner's code once (no arguments).
        state: keys of :data:`STATE` to compare before and after.
        modules: the models whose ``train``/``hooks``/``requires_grad`` state is compared.
        raises: runs the learner's code so that it raises (a model whose forward raises, say); the
            state must be restored then too, and it must raise.
        flip: the settings put in their non-default value for a second run (default: every key of
            ``state`` that has one), so that an answer that resets to the default instead of to
            what it found fails. ``()`` for no second run.
        name: what the messages call the code.

    Returns:
        What the first ``call()`` returned. Settings are put back after the check, pass or fail.
    """
    unknown = [k for k in state if k not in STATE]
    if unknown:
        raise ValueError(f"unknown state {unknown}: choose from {sorted(STATE)}")
    flips = [k for k in (state if flip is None else flip) if STATE[k][2] is not None]
    first: Any = None
    for n, start in enumerate([[], flips] if flips else [[]]):
        with _kept(modules):
            for k in start:
                STATE[k][2](modules)  # type: ignore[misc]
            was = f" (when {', '.join(STATE[k][0].split(' (')[0] for k in start)} had been set otherwise before)" \
                if start else ""
            before = _snapshot(state, modules)
            result = call()
            first = result if n == 0 else first
            _compare(before, _snapshot(state, modules), f"after {name} returned{was}")
            if raises is not None:
                before = _snapshot(state, modules)
                try:
                    raises()
                except Exception:  # noqa: BLE001 - any error: the point is the state after it
                    pass
                else:
                    raise AssertionError(f"{name} should have raised here (the test makes it fail on purpose)")
                _compare(before, _snapshot(state, modules), f"after {name} raised an error{was}")
    return first


def _compare(before: dict[str, Any], after: dict[str, Any], when: str) -> None:
    for key, b in before.items():
        if after[key] != b:
            raise AssertionError(
                f"{when}, {STATE[key][0]} was not as before: {_first_difference(b, after[key])}. Save what you "
                "change before changing it and put back that saved value in a `finally:` block, so it is restored "
                "on an error too and is not reset to a default the caller did not have")

"""The fixes the doctor can apply to a run by itself, without touching the script.

Each :class:`Fix` turns a freshly built :class:`~course_utils.doctor.contract.Training` into the
same run with one change: a new loader, optimizer or model setting, a context entered around every
step (``wrap``), or a change to each batch (``batch_fn``). The script's file is never edited; the
learner reads the change in :attr:`Fix.change` and makes it in their own code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from .contract import Training
from .instruments import anomaly_off
from .probe import Probe

__all__ = ["Fix", "FIXES", "combine"]


@dataclass(frozen=True)
class Fix:
    """A change the doctor applies to a run, and times against the run as written."""

    name: str
    change: str  #: what to change in the script, in a learner's words
    apply: Callable[[Training, Probe], Training]
    target: str = "step"  #: what is timed: "step" (batch fetch included) or "evaluate"


def _then(first: Callable[[Any], Any] | None, second: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return second if first is None else (lambda b: second(first(b)))


def _map_tensors(batch: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_map_tensors(b, fn) for b in batch)
    return batch


def _workers(run: Training, probe: Probe) -> Training:
    from ..hardware import usable_cpus

    old = run.loader
    workers = max(1, min(8, usable_cpus() - 1))
    batching: dict[str, Any] = ({"batch_size": old.batch_size, "drop_last": old.drop_last, "sampler": old.sampler}
                                if old.batch_size is not None else {"batch_sampler": old.batch_sampler})
    loader = torch.utils.data.DataLoader(old.dataset, **batching, collate_fn=old.collate_fn, num_workers=workers,
                                         pin_memory=run.device.type == "cuda", persistent_workers=True)
    return run.but(loader=loader)


def _float32(run: Training, probe: Probe) -> Training:
    run.model.float()  # the same Parameter objects: the optimizer keeps them
    cast = lambda t: t.float() if t.dtype == torch.float64 else t  # noqa: E731
    return run.but(batch_fn=_then(run.batch_fn, lambda b: _map_tensors(b, cast)))


def _autocast(run: Training, probe: Probe) -> Training:
    from ..devices import autocast

    dtype = getattr(torch, probe.amp_dtype or "float32")
    return run.but(wrap=(*run.wrap, lambda: autocast(run.device.type, dtype)))


def _rebuilt_optimizer(opt: torch.optim.Optimizer, drop: frozenset[int] | set[int] = frozenset(),
                       **settings: Any) -> Any:
    """A new optimizer of ``opt``'s class over its groups (less the parameters in ``drop``), with ``settings``."""
    import inspect

    accepted = set(inspect.signature(type(opt).__init__).parameters) - {"self", "params"}
    defaults = {k: v for k, v in {**opt.defaults, **settings}.items() if k in accepted}
    groups = [{**{k: v for k, v in g.items() if k in accepted}, **{k: v for k, v in settings.items() if k in accepted},
               "params": [p for p in g["params"] if id(p) not in drop]} for g in opt.param_groups]
    return type(opt)([g for g in groups if g["params"]], **defaults)


def fast_implementation(opt: torch.optim.Optimizer, device: torch.device) -> dict[str, Any]:
    """The settings of ``opt``'s fastest implementation on ``device``: fused where torch has it, else foreach."""
    fused_ok = device.type in ("cuda", "cpu", "mps") and "fused" in opt.defaults and not opt.defaults.get(
        "differentiable")
    return {"fused": True, "foreach": None} if fused_ok else {"foreach": True}


def _fused(run: Training, probe: Probe) -> Training:
    return run.but(optimizer=_rebuilt_optimizer(run.optimizer, **fast_implementation(run.optimizer, run.device)))


@contextlib.contextmanager
def _benchmark_on() -> Iterator[None]:
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = before


def _no_anomaly(run: Training, probe: Probe) -> Training:
    return run.but(wrap=(*run.wrap, anomaly_off))


def _set_to_none(run: Training, probe: Probe) -> Training:
    for owner in (run.optimizer, run.model):
        original = owner.zero_grad
        owner.zero_grad = (lambda *a, _o=original, **kw: _o(set_to_none=True))  # type: ignore[method-assign]
    return run


def _drop_conv_bias(run: Training, probe: Probe) -> Training:
    named = dict(run.model.named_modules())
    dropped: set[int] = set()
    for name in probe.conv_bias_bn:
        conv = named.get(name)
        if conv is not None and getattr(conv, "bias", None) is not None:
            dropped.add(id(conv.bias))
            conv.register_parameter("bias", None)
    return run.but(optimizer=_rebuilt_optimizer(run.optimizer, drop=dropped))


def _inference_eval(run: Training, probe: Probe) -> Training:
    return run.but(eval_wrap=(*run.eval_wrap, torch.inference_mode))


def _compile(run: Training, probe: Probe) -> Training:
    return run.but(model=torch.compile(run.model))


def _channels_last(run: Training, probe: Probe) -> Training:
    run.model.to(memory_format=torch.channels_last)
    to_cl = lambda t: t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t  # noqa: E731
    return run.but(batch_fn=_then(run.batch_fn, lambda b: _map_tensors(b, to_cl)))


#: The fixes by name.
FIXES: dict[str, Fix] = {f.name: f for f in (
    Fix("workers", "DataLoader(..., num_workers=N, persistent_workers=True) (and pin_memory=True on CUDA)", _workers),
    Fix("float32", "model.float() and float32 inputs (float64 is slow on every device)", _float32),
    Fix("autocast", "the forward and the loss under torch.autocast(device, dtype) (a GradScaler with float16)",
        _autocast),
    Fix("fused_optimizer", "the optimizer built with fused=True (or foreach=True where it has no fused one)", _fused),
    Fix("cudnn_benchmark", "torch.backends.cudnn.benchmark = True before training", lambda r, p: r.but(
        wrap=(*r.wrap, _benchmark_on))),
    Fix("no_anomaly", "anomaly detection off (remove set_detect_anomaly(True) / detect_anomaly())", _no_anomaly),
    Fix("set_to_none", "optimizer.zero_grad() (set_to_none=True, the default since PyTorch 2.0)", _set_to_none),
    Fix("drop_conv_bias", "bias=False on each convolution that feeds a BatchNorm", _drop_conv_bias),
    Fix("inference_eval", "the evaluation under torch.inference_mode()", _inference_eval, target="evaluate"),
    Fix("compile", "model = torch.compile(model)", _compile),
    Fix("channels_last", "model.to(memory_format=torch.channels_last) and channels_last inputs", _channels_last),
)}


def combine(run: Training, probe: Probe, fixes: list[Fix]) -> Training:
    """``run`` with every fix of ``fixes`` applied, in order."""
    for fix in fixes:
        run = fix.apply(run, probe)
    return run

"""The capstone's training script, built with the fixes of a :class:`~course_utils.capstone.fixes.Stack` on.

:func:`build` makes every part of one run (model, optimizer, schedule, data source, the step, the
loss and the evaluation) exactly as the naive script or the stack has them; the speed-run
(:func:`~course_utils.capstone.speedrun.run_once`) trains with them, and :func:`stepper` returns one
training step of them, batch fetching included, for the profiler and for ``cu.compare``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from . import fixes
from .fixes import NAIVE_BATCH, NAIVE_LR, DeviceInfo, SpeedConfig, Stack, fast_config

__all__ = ["Script", "StepProfile", "build", "eval_with_autograd", "profile_steps", "stepper"]


@dataclass
class Script:
    """One run's parts, as ``stack`` has them (see :func:`build`)."""

    stack: Stack
    device: torch.device
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    source: Any  #: a Dataset on the device (decode_once) or a DataLoader over the PNG files
    batch_size: int
    steps: int
    amp: torch.dtype | None
    scaler: Any
    step: Callable[..., torch.Tensor]  #: ``step(model, batch, optimizer, **kw)``, as ``cu.train``'s step_fn
    eval_fn: Callable[[torch.nn.Module, torch.Tensor, torch.Tensor], float]
    logged: list[float]  #: the naive script's per-step loss log

    def anomaly(self) -> contextlib.AbstractContextManager:
        """Anomaly detection, on in the naive script (a no-op once ``no_anomaly`` is on)."""
        return contextlib.nullcontext() if "no_anomaly" in self.stack else torch.autograd.set_detect_anomaly(True)


def eval_with_autograd(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """The naive script's evaluation: eval mode, but autograd records every op (and keeps the activations).

    Under anomaly detection (on in the naive script) every recorded op also captures a Python
    traceback. Lesson 19's Exercise 3 writes the fix; ``cu.evaluate`` is the library's.
    """
    model.eval()
    try:
        correct = sum(int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum()) for i in range(0, len(X), 256))
    finally:
        model.train()
    return correct / len(X)


_eval_with_autograd = eval_with_autograd  # the old private name


def build(stack: Stack, prepared: Any, *, seed: int, config: SpeedConfig | None = None,
          device: torch.device | str | None = None) -> Script:
    """Build one run of ``stack``'s script: seeded model and batch order, data decoded if ``decode_once``.

    Args:
        stack: the fixes that are on.
        prepared: a :class:`~course_utils.capstone.speedrun.Prepared` (data, PNG files, profile sizes).
        seed: seeds the weights and the batch order.
        config: the device-dependent choices; :func:`~course_utils.capstone.fixes.fast_config` of the device when None.
        device: where to train; :func:`~course_utils.env.choose_device` when None.
    """
    from ..data.dataset import Dataset
    from ..data.image_files import image_folder
    from ..env import autocast, check_device, seed_everything
    from ..training.loop import evaluate, train_step
    from ..training.models import ConvNetConfig, make_convnet

    device = check_device(device)
    config = config or fast_config(DeviceInfo.here(device))
    p, data = prepared.sizes, prepared.data
    batch, lr = (config.batch_size, config.lr) if "big_batch" in stack else (NAIVE_BATCH, NAIVE_LR)
    steps = p.budget_examples // batch
    seed_everything(seed)
    model = make_convnet(ConvNetConfig(data.input_shape[0], data.num_classes, p.width, p.depth,
                                       conv_bias="no_conv_bias" not in stack)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    scheduler = (torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr * fixes.ONE_CYCLE_PEAK, total_steps=steps,
                                                     pct_start=config.warmup) if "one_cycle" in stack else None)
    amp = config.amp_dtype if "amp" in stack else None
    scaler = torch.amp.GradScaler(device.type) if amp == torch.float16 else None
    workers = config.num_workers if "workers" in stack else 0
    files = image_folder(prepared.image_root)
    if "decode_once" in stack:  # every file read once, through the same pipeline
        loader = torch.utils.data.DataLoader(files, batch_size=1024, num_workers=workers)
        X, y = (torch.cat(t) for t in zip(*loader))
        # on the device before the setup clock stops, so no copy falls outside the stopwatch
        source: Any = Dataset(data.name, X, y, X[:1], y[:1], data.classes).to(device)
    else:
        source = torch.utils.data.DataLoader(files, batch_size=batch, shuffle=True, drop_last=True,
                                             num_workers=workers, persistent_workers=workers > 0,
                                             pin_memory=config.pin_memory and "workers" in stack,
                                             generator=torch.Generator().manual_seed(seed))
    weight = torch.ones(data.num_classes, device=device)
    logged: list[float] = []

    def loss_fn(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        w = weight if "constants_on_device" in stack else torch.ones(data.num_classes).to(device)
        return F.cross_entropy(out, y, weight=w)

    def step(model: torch.nn.Module, b: Any, opt: torch.optim.Optimizer, **kw: Any) -> torch.Tensor:
        loss = train_step(model, b, opt, loss_fn=loss_fn, **kw)
        if "no_item_log" not in stack:
            logged.append(loss.item())  # the naive log: a host-device sync every step
        return loss

    def eval_fn(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
        if "inference_eval" in stack:
            return evaluate(model, X, y, amp_dtype=amp)
        with autocast(device.type, amp):
            return eval_with_autograd(model, X, y)

    return Script(stack, device, model, optimizer, scheduler, source, batch, steps, amp, scaler, step, eval_fn,
                  logged)


def stepper(stack: Stack, prepared: Any, *, seed: int = 0, config: SpeedConfig | None = None,
            device: torch.device | str | None = None) -> Callable[[], torch.Tensor]:
    """One training step of ``stack``'s script per call, fetching its batch the script's way.

    The naive script's step reads and decodes its batch from the PNG files and copies it to the
    device; the stack's indexes the decoded tensor. Anomaly detection is on inside the step where
    the script has it on. For :func:`~course_utils.counters.profiling.profile_table` and ``cu.compare``.
    """
    from ..data.loaders import batches

    s = build(stack, prepared, seed=seed, config=config, device=device)
    if "decode_once" in stack:
        feed: Iterator[Any] = batches(s.source.X_train, s.source.y_train, s.batch_size, seed=seed)
    else:
        def cycle() -> Iterator[Any]:
            while True:
                yield from s.source
        feed = cycle()

    def one_step() -> torch.Tensor:
        X, y = next(feed)
        with s.anomaly():
            return s.step(s.model, (X.to(s.device, non_blocking=True), y.to(s.device, non_blocking=True)),
                          s.optimizer, amp_dtype=s.amp, scaler=s.scaler)

    return one_step


@dataclass
class StepProfile:
    """Several profiled steps: the profiler's table and each op's self time per step."""

    text: str  #: the profiler's table (totals over the ``active`` steps), sorted by self time
    self_ms: dict[str, float]  #: op name -> self CPU time per profiled step, in ms
    calls: dict[str, float]  #: op name -> calls per profiled step
    active: int
    skipped: int

    def __str__(self) -> str:
        return (f"{self.active} profiled steps after {self.skipped} unrecorded ones (wait, then warm-up); "
                f"times are totals over the {self.active}\n{self.text}")

    def per_step(self, ops: list[str]) -> dict[str, float]:
        """Self CPU ms per step of ``ops`` (0.0 for an op that did not run)."""
        return {op: self.self_ms.get(op, 0.0) for op in ops}


def profile_steps(step: Callable[[], Any], *, device: torch.device | str = "cpu", wait: int = 1, warmup: int = 1,
                  active: int = 3, row_limit: int = 12) -> StepProfile:
    """Profile ``active`` calls of ``step`` under ``torch.profiler.schedule(wait, warmup, active)``.

    One step is a poor sample: its first-call costs and its one-off events (a batch decoded, a
    worker woken) land in the table as if every step paid them. The schedule skips ``wait`` steps,
    records ``warmup`` and throws them away, then keeps ``active`` steps, whose totals the table
    shows (sorted by self CPU time, or self CUDA time on a GPU, which then also lists kernels).
    """
    from torch.profiler import ProfilerActivity, profile, schedule

    from ..counters.profiling import quiet_stderr
    from ..env import synchronize

    if not callable(step):
        raise TypeError(f"step must be a callable taking no arguments, got {type(step).__name__}")
    device = torch.device(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with quiet_stderr(), profile(activities=activities,
                                 schedule=schedule(wait=wait, warmup=warmup, active=active)) as prof:
        for _ in range(wait + warmup + active):
            step()
            synchronize(device)
            prof.step()
    averages = prof.key_averages()
    key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    return StepProfile(averages.table(sort_by=key, row_limit=row_limit),
                       {e.key: e.self_cpu_time_total / 1e3 / active for e in averages},
                       {e.key: e.count / active for e in averages}, active, wait + warmup)

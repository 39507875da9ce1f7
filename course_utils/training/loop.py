"""One reference training loop that tricks plug into as arguments.

A trick is an argument of :func:`train_step` (autocast dtype and GradScaler, gradient
accumulation, clipping, ``zero_grad`` mode) or of :func:`train` (optimizer, LR scheduler, a
replacement ``step_fn``, a ``DataLoader``), never a copied loop. :func:`train` never synchronises
per step: on a GPU each step is bracketed by CUDA events that are read once, at an evaluation or
at the end, so the host keeps queueing work as a real training loop does. Each step is also on
the host wall clock, data loading included (:class:`History` says which number is which).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from ..data.dataset import Dataset
from ..data.loaders import batches
from ..env import autocast, synchronize
from ..progress import progress_bar
from .history import History

__all__ = ["History", "evaluate", "train", "train_step"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
StepFn = Callable[..., torch.Tensor]
Batch = tuple[torch.Tensor, torch.Tensor]


def train_step(
    model: nn.Module,
    batch: tuple[torch.Tensor, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    loss_fn: LossFn = F.cross_entropy,
    amp_dtype: torch.dtype | None = None,
    scaler: torch.amp.GradScaler | None = None,
    accumulation_steps: int = 1,
    clip_grad_norm: float | None = None,
    clip_fn: Callable[..., Any] | None = None,
    set_to_none: bool = True,
) -> torch.Tensor:
    """Run one optimizer step on ``batch`` and return the loss as a detached tensor (no sync).

    Args:
        model: the model, in training mode.
        batch: ``(X, y)`` on the model's device.
        optimizer: the optimizer of ``model``'s parameters.
        loss_fn: ``loss_fn(outputs, y)`` returning the mean loss.
        amp_dtype: run the forward pass under ``torch.autocast`` in this dtype (fp16 or bf16).
        scaler: a ``torch.amp.GradScaler`` for fp16 (scales the loss, skips steps with inf/NaN).
        accumulation_steps: split the batch into this many micro-batches (uneven last one
            allowed) whose gradients add up to the full batch's.
        clip_grad_norm: clip the total gradient norm to this value (unscaled first under AMP).
        clip_fn: the clipping function, called as ``clip_fn(model.parameters(), clip_grad_norm)``;
            ``torch.nn.utils.clip_grad_norm_`` when omitted (a learner's own plugs in here).
        set_to_none: ``optimizer.zero_grad(set_to_none=...)``; True is PyTorch's default.

    Returns:
        The batch's mean loss, detached, on the device.
    """
    X, y = batch
    if accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be >= 1, got {accumulation_steps}")
    optimizer.zero_grad(set_to_none=set_to_none)
    total = torch.zeros((), device=X.device)
    for xb, yb in zip(torch.tensor_split(X, accumulation_steps), torch.tensor_split(y, accumulation_steps)):
        if len(xb) == 0:
            continue
        with autocast(X.device.type, amp_dtype):
            # Weight each micro-batch by its share, so the summed gradients equal the full batch's.
            loss = loss_fn(model(xb), yb) * (len(xb) / len(X))
        (scaler.scale(loss) if scaler is not None else loss).backward()
        total += loss.detach().float()
    if clip_grad_norm is not None:
        if scaler is not None:
            scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        (clip_fn or nn.utils.clip_grad_norm_)(model.parameters(), clip_grad_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return total


def evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor, *, batch_size: int = 1024,
             amp_dtype: torch.dtype | None = None) -> float:
    """Accuracy of ``model`` on ``(X, y)`` under ``inference_mode``; every module's train/eval flag is restored.

    Every flag, not only the top one: a training model may hold a submodule frozen in eval mode
    (a BatchNorm kept at its running statistics), which ``model.train(was_training)`` would unfreeze.
    """
    was_training = [(m, m.training) for m in model.modules()]
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=X.device)
    try:
        with torch.inference_mode(), autocast(X.device.type, amp_dtype):
            for i in range(0, len(X), batch_size):
                correct += (model(X[i:i + batch_size]).argmax(1) == y[i:i + batch_size]).sum()
    finally:
        for m, flag in was_training:
            m.training = flag
    return correct.item() / len(X)


class _StepClock:
    """Times steps without a per-step sync: CUDA events read later, or the host clock on a CPU."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.events = device.type == "cuda"
        self.pending: list[tuple[Any, Any]] = []

    def start(self) -> Any:
        if self.events:
            with torch.cuda.device(self.device):
                e = torch.cuda.Event(enable_timing=True)
                e.record()
            return e
        if self.device.type == "mps":  # no reliable MPS events on every torch: one sync per step
            synchronize(self.device)
        return time.perf_counter()

    def stop(self, started: Any, out: list[float]) -> None:
        if self.events:
            with torch.cuda.device(self.device):
                e = torch.cuda.Event(enable_timing=True)
                e.record()
            self.pending.append((started, e))
            return
        if self.device.type == "mps":
            synchronize(self.device)
        out.append(time.perf_counter() - started)

    def flush(self, out: list[float]) -> None:
        """Read every pending event pair (one sync for all of them)."""
        if self.pending:
            self.pending[-1][1].synchronize()
            out.extend(s.elapsed_time(e) / 1e3 for s, e in self.pending)
            self.pending.clear()


def _batch_stream(data: Dataset | Iterable[Batch], batch_size: int, seed: int) -> Iterator[Batch]:
    """Batches forever: sampled from a Dataset's training split, or an iterable cycled by epoch."""
    if isinstance(data, Dataset):
        return batches(data.X_train, data.y_train, batch_size, seed=seed)
    if isinstance(data, Iterator):
        return data
    return itertools.chain.from_iterable(itertools.repeat(data))  # a DataLoader: epoch after epoch


def train(
    model: nn.Module,
    data: Dataset | Iterable[Batch],
    *,
    steps: int,
    batch_size: int = 64,
    optimizer: torch.optim.Optimizer | None = None,
    lr: float = 0.05,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    step_fn: StepFn = train_step,
    eval_every: int | None = None,
    eval_data: Dataset | None = None,
    eval_fn: Callable[[nn.Module, torch.Tensor, torch.Tensor], float] | None = None,
    target: float | None = None,
    device: torch.device | str | None = None,
    seed: int = 0,
    progress: bool = True,
    label: str = "",
    **step_kwargs: Any,
) -> History:
    """Train ``model`` for ``steps`` optimizer steps and return its :class:`History`.

    Args:
        model: the model (moved to ``device``).
        data: a :class:`~course_utils.data.dataset.Dataset` (moved to the device; batches are sampled
            from its training split), or any iterable of ``(X, y)`` batches such as a
            ``DataLoader`` (cycled epoch after epoch; batches are copied with ``non_blocking``).
        steps: optimizer steps to run (fewer when ``target`` is reached first).
        batch_size: examples per step when ``data`` is a Dataset.
        optimizer: the optimizer; SGD with momentum 0.9 at ``lr`` when omitted.
        lr: learning rate of the default optimizer.
        scheduler: an LR scheduler stepped after every optimizer step.
        step_fn: the step; :func:`train_step` or a replacement with the same signature.
        eval_every: evaluate test accuracy every this many steps (and at the end).
        eval_data: where to evaluate; the test split of ``data`` when it is a Dataset.
        eval_fn: ``eval_fn(model, X_test, y_test)`` returning the accuracy; :func:`evaluate`
            when omitted. Each evaluation's host time goes to ``History.eval_seconds``.
        target: stop at the first evaluation whose accuracy reaches this value.
        device: where to train; the model's device when omitted.
        seed: seed of the batch order (Dataset only; a DataLoader has its own).
        progress: show a progress bar.
        label: a name for printouts and plots.
        **step_kwargs: passed to ``step_fn`` (``amp_dtype``, ``scaler``, ``accumulation_steps``,
            ``clip_grad_norm``, ``clip_fn``, ``set_to_none``, ``loss_fn``).

    Returns:
        The :class:`History`, with each step on two clocks (evaluation excluded from both):
        ``step_time``, the **device time per step (CUDA events)** on a GPU, host time on a CPU;
        and ``host_step_time``, the **host wall time per step, data loading included**, whose sum
        is the elapsed training time, data stalls included. ``data_time`` is the host time spent
        waiting for each batch and queueing its copy. Nothing syncs per step: losses and event
        times are read at evaluations and at the end, where the one sync also closes the host
        clock. (A GradScaler reads its inf check once per step: the one documented exception.)

    Raises:
        ValueError: ``steps`` < 1, or evaluation asked for without data to evaluate on.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device).train()
    if isinstance(data, Dataset):
        data = data.to(device)
        eval_data = eval_data if eval_data is not None else data
    if eval_every and eval_data is None:
        raise ValueError("eval_every needs eval_data when data is not a Dataset")
    if eval_data is not None:
        eval_data = eval_data.to(device)
    optimizer = optimizer or torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    stream = _batch_stream(data, batch_size, seed)
    clock = _StepClock(device)
    hist = History(label=label, step_clock={"cuda": "device time, CUDA events",
                                            "mps": "host clock, synchronised per step"}.get(device.type, "host clock"))
    losses: list[torch.Tensor] = []
    bar = progress_bar(steps, label or "train", leave=False) if progress else None
    boundary = time.perf_counter()  # host wall clock: one step boundary to the next
    try:
        for step in range(1, steps + 1):
            t0 = time.perf_counter()
            X, y = next(stream)
            batch = (X.to(device, non_blocking=True), y.to(device, non_blocking=True))
            hist.data_time.append(time.perf_counter() - t0)
            lr_now = optimizer.param_groups[0]["lr"]
            hist.lr.append(lr_now if isinstance(lr_now, float) else float("nan"))
            started = clock.start()
            losses.append(step_fn(model, batch, optimizer, **step_kwargs))
            if scheduler is not None:
                scheduler.step()
            clock.stop(started, hist.step_time)
            if bar is not None:
                bar.update(1)
            if eval_every and (step % eval_every == 0 or step == steps):
                clock.flush(hist.step_time)  # the sync an evaluation needs anyway: the queue drains here
                hist.host_step_time.append(time.perf_counter() - boundary)
                t_eval = time.perf_counter()
                acc = (eval_fn or evaluate)(model, eval_data.X_test, eval_data.y_test)
                hist.eval_seconds.append(time.perf_counter() - t_eval)
                hist.eval_step.append(step)
                hist.eval_accuracy.append(acc)
                hist.eval_time.append(sum(hist.step_time))
                boundary = time.perf_counter()  # the evaluation is on neither clock
                if target is not None and acc >= target:
                    break
            elif step < steps:  # the last step's boundary is after the sync at the end
                hist.host_step_time.append(time.perf_counter() - boundary)
                boundary += hist.host_step_time[-1]
    finally:
        if bar is not None:
            bar.close()
    clock.flush(hist.step_time)  # the one sync at the end: the last step's host time includes the drain
    if len(hist.host_step_time) < len(hist.step_time):
        hist.host_step_time.append(time.perf_counter() - boundary)
    hist.loss = torch.stack(losses).float().cpu().tolist()  # one sync for all the losses
    return hist

"""One reference training loop that tricks plug into as arguments, and time-to-target helpers.

A trick is an argument of :func:`train_step` (autocast dtype and GradScaler, gradient
accumulation, clipping, ``zero_grad`` mode) or of :func:`train` (optimizer, LR scheduler, a
replacement ``step_fn``), never a copied loop.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from .data import Dataset, batches
from .env import seed_everything, synchronize
from .timing import format_seconds

__all__ = ["History", "TargetResult", "evaluate", "steps_to_target", "train", "train_step"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
StepFn = Callable[..., torch.Tensor]


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
        with torch.autocast(X.device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            # Weight each micro-batch by its share, so the summed gradients equal the full batch's.
            loss = loss_fn(model(xb), yb) * (len(xb) / len(X))
        (scaler.scale(loss) if scaler is not None else loss).backward()
        total += loss.detach().float()
    if clip_grad_norm is not None:
        if scaler is not None:
            scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return total


def evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor, *, batch_size: int = 1024,
             amp_dtype: torch.dtype | None = None) -> float:
    """Accuracy of ``model`` on ``(X, y)`` under ``inference_mode``; the training mode is restored."""
    was_training = model.training
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=X.device)
    try:
        with torch.inference_mode(), torch.autocast(X.device.type, dtype=amp_dtype,
                                                    enabled=amp_dtype is not None):
            for i in range(0, len(X), batch_size):
                correct += (model(X[i:i + batch_size]).argmax(1) == y[i:i + batch_size]).sum()
    finally:
        model.train(was_training)
    return correct.item() / len(X)


@dataclass
class History:
    """What :func:`train` recorded: per-step loss, LR and time, and the evaluations."""

    label: str = ""
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    step_time: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval_accuracy: list[float] = field(default_factory=list)
    eval_time: list[float] = field(default_factory=list)

    @property
    def steps(self) -> int:
        """Number of optimizer steps run."""
        return len(self.loss)

    @property
    def wall_time(self) -> list[float]:
        """Cumulative training time after each step (evaluation excluded)."""
        out, t = [], 0.0
        for s in self.step_time:
            t += s
            out.append(t)
        return out

    @property
    def final_accuracy(self) -> float | None:
        """The last evaluated accuracy, or None without evaluation."""
        return self.eval_accuracy[-1] if self.eval_accuracy else None

    def steps_to(self, target: float) -> int | None:
        """First evaluated step whose accuracy reached ``target``; None if never."""
        for step, acc in zip(self.eval_step, self.eval_accuracy):
            if acc >= target:
                return step
        return None

    def time_to(self, target: float) -> float | None:
        """Training seconds until the accuracy first reached ``target``; None if never."""
        step = self.steps_to(target)
        return None if step is None else self.wall_time[step - 1]

    def to_dict(self) -> dict[str, Any]:
        """Return the history as a JSON-serialisable dict."""
        return {"kind": "history", **asdict(self)}

    def __str__(self) -> str:
        acc = f", accuracy {self.final_accuracy:.3f}" if self.eval_accuracy else ""
        return (f"{self.label or 'run'}: {self.steps} steps, final loss {self.loss[-1]:.4f}{acc}, "
                f"median step {format_seconds(statistics.median(self.step_time))}")


def train(
    model: nn.Module,
    data: Dataset,
    *,
    steps: int,
    batch_size: int = 64,
    optimizer: torch.optim.Optimizer | None = None,
    lr: float = 0.05,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    step_fn: StepFn = train_step,
    eval_every: int | None = None,
    target: float | None = None,
    device: torch.device | str | None = None,
    seed: int = 0,
    progress: bool = True,
    label: str = "",
    **step_kwargs: Any,
) -> History:
    """Train ``model`` on ``data`` for ``steps`` optimizer steps and return its :class:`History`.

    Args:
        model: the model (moved to ``device``).
        data: a :class:`~course_utils.data.Dataset`; batches are drawn from its training split.
        steps: optimizer steps to run (fewer when ``target`` is reached first).
        batch_size: examples per step.
        optimizer: the optimizer; SGD with momentum 0.9 at ``lr`` when omitted.
        lr: learning rate of the default optimizer.
        scheduler: an LR scheduler stepped after every optimizer step.
        step_fn: the step; :func:`train_step` or a replacement with the same signature.
        eval_every: evaluate test accuracy every this many steps (and at the end).
        target: stop at the first evaluation whose accuracy reaches this value.
        device: where to train; the model's device when omitted.
        seed: seed of the batch order.
        progress: show a progress bar.
        label: a name for printouts and plots.
        **step_kwargs: passed to ``step_fn`` (``amp_dtype``, ``scaler``, ``accumulation_steps``,
            ``clip_grad_norm``, ``set_to_none``, ``loss_fn``).

    Returns:
        The :class:`History`. Step times are synchronised with the device, evaluation excluded.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    model.to(device).train()
    data = data.to(device)
    optimizer = optimizer or torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    stream = batches(data.X_train, data.y_train, batch_size, seed=seed)
    hist = History(label=label)
    losses: list[torch.Tensor] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=label or "train", leave=False)
    try:
        for step in range(1, steps + 1):
            batch = next(stream)
            hist.lr.append(optimizer.param_groups[0]["lr"])
            synchronize(device)
            t0 = time.perf_counter()
            losses.append(step_fn(model, batch, optimizer, **step_kwargs))
            if scheduler is not None:
                scheduler.step()
            synchronize(device)
            hist.step_time.append(time.perf_counter() - t0)
            if bar is not None:
                bar.update(1)
            if eval_every and (step % eval_every == 0 or step == steps):
                acc = evaluate(model, data.X_test, data.y_test)
                hist.eval_step.append(step)
                hist.eval_accuracy.append(acc)
                hist.eval_time.append(sum(hist.step_time))
                if target is not None and acc >= target:
                    break
    finally:
        if bar is not None:
            bar.close()
    hist.loss = torch.stack(losses).float().cpu().tolist()  # one sync for all the losses
    return hist


@dataclass
class TargetResult:
    """Steps (and time) to a target accuracy over several seeds."""

    label: str
    target: float
    seeds: list[int]
    steps: list[int | None]
    step_time: float

    @property
    def reached(self) -> int:
        """How many seeds reached the target."""
        return sum(s is not None for s in self.steps)

    @property
    def median_steps(self) -> float | None:
        """Median steps to target; unreached seeds count as infinite. None if most never reached."""
        vals = sorted(float("inf") if s is None else s for s in self.steps)
        med = statistics.median(vals)
        return None if med == float("inf") else med

    @property
    def time_to_target(self) -> float | None:
        """Median steps to target × median measured step time, in seconds."""
        med = self.median_steps
        return None if med is None else med * self.step_time

    def __str__(self) -> str:
        per_seed = ", ".join("never" if s is None else str(s) for s in self.steps)
        med = self.median_steps
        if med is None:
            return (f"{self.label}: most seeds never reached {self.target:.0%} "
                    f"(steps per seed: {per_seed})")
        return (f"{self.label}: {med:g} steps to {self.target:.0%} (median of {len(self.seeds)} "
                f"seeds; per seed: {per_seed}) ≈ {format_seconds(self.time_to_target or 0)} "
                f"at {format_seconds(self.step_time)} per step")

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-serialisable dict (``kind`` = ``"target"``)."""
        return {"kind": "target", **asdict(self), "median_steps": self.median_steps,
                "time_to_target": self.time_to_target}


def steps_to_target(run: Callable[[int], History], target: float, *, seeds: Sequence[int] = (0, 1, 2),
                    label: str = "", step_time: float | None = None) -> TargetResult:
    """Run ``run(seed)`` for every seed and collect the steps to ``target`` accuracy.

    Each run starts from :func:`~course_utils.env.seed_everything` (so model init follows the
    seed) and should call :func:`train` with ``eval_every`` and ``target`` set.

    Args:
        run: builds a model and trains it for one seed, returning the :class:`History`.
        target: the test accuracy to reach.
        seeds: at least 3 seeds, since single runs are noise.
        label: a name for the printout.
        step_time: seconds per step to convert steps into time, best measured interleaved with
            :func:`~course_utils.timing.compare`; by default the median of the runs' own step
            times, which drift with machine load.

    Returns:
        A :class:`TargetResult` with the steps per seed and the step time.
    """
    if len(seeds) < 1:
        raise ValueError("steps_to_target needs at least one seed")
    steps: list[int | None] = []
    times: list[float] = []
    for seed in seeds:
        seed_everything(seed)
        hist = run(seed)
        steps.append(hist.steps_to(target))
        times.extend(hist.step_time)
    return TargetResult(label=label, target=target, seeds=list(seeds), steps=steps,
                        step_time=step_time if step_time is not None else statistics.median(times))

"""Matplotlib figures of training runs: curves against step and wall time, LR schedules, the ablation.

:func:`lr_trace` reads the learning rates :func:`plot_lr` draws from an optimizer and its scheduler.

matplotlib is imported inside each function and no global style is set, so importing
``course_utils`` changes nothing. The figures of a comparison (speed-up bars) are in
:mod:`course_utils.measure.figures`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..measure.figures import _axes, verdict_color

if TYPE_CHECKING:
    from ..training.loop import History

__all__ = ["lr_trace", "plot_curves", "plot_lr", "plot_waterfall"]


def plot_curves(histories: Mapping[str, History] | Sequence[History], *, x: str = "step",
                y: str = "loss", ax: Any = None, target: float | None = None) -> Any:
    """Curves of several runs: ``y`` in {"loss", "accuracy"} against ``x`` in {"step", "time"}.

    Args:
        histories: runs to draw, by label (or a list, labelled by ``History.label``).
        x: ``"step"`` or ``"time"`` (training seconds, evaluation excluded).
        y: ``"loss"`` (every step) or ``"accuracy"`` (at each evaluation).
        ax: axes to draw on; a new figure when omitted.
        target: draw a horizontal line at this accuracy.

    Returns:
        The matplotlib axes.
    """
    if x not in ("step", "time") or y not in ("loss", "accuracy"):
        raise ValueError("x must be 'step' or 'time' and y must be 'loss' or 'accuracy'")
    items = histories.items() if isinstance(histories, Mapping) else [(h.label, h) for h in histories]
    ax = _axes(ax)
    for label, h in items:
        if y == "loss":
            xs = list(range(1, h.steps + 1)) if x == "step" else h.wall_time
            ax.plot(xs, h.loss, label=label, lw=1)
        else:
            xs = h.eval_step if x == "step" else h.eval_time
            ax.plot(xs, h.eval_accuracy, marker="o", ms=3, label=label)
    if target is not None and y == "accuracy":
        ax.axhline(target, color="black", lw=1, ls="--", label=f"target {target:.0%}")
    ax.set_xlabel("optimizer step" if x == "step" else "training time (s)")
    ax.set_ylabel("training loss" if y == "loss" else "test accuracy")
    if y == "loss":
        ax.set_yscale("log")
    ax.legend()
    ax.figure.tight_layout()
    return ax


def plot_lr(schedules: Mapping[str, Sequence[float]], *, ax: Any = None) -> Any:
    """Learning rate against step for one or more schedules."""
    ax = _axes(ax)
    for label, lrs in schedules.items():
        ax.plot(range(1, len(lrs) + 1), lrs, label=label)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("learning rate")
    ax.legend()
    ax.figure.tight_layout()
    return ax


def lr_trace(optimizer: Any, scheduler: Any | None, steps: int, *, group: int = 0) -> list[float]:
    """The learning rate an optimizer and its scheduler give at each of ``steps`` steps, without training.

    Reads param group ``group``'s LR, then steps the optimizer (a no-op without gradients; it keeps
    the order PyTorch expects, optimizer then scheduler) and the scheduler, ``steps`` times. Both
    are stepped: give it a throw-away pair on a dummy parameter, such as
    ``torch.nn.Linear(1, 1).parameters()``. Draw the traces with :func:`plot_lr`.

    Args:
        optimizer: a ``torch.optim.Optimizer`` whose parameters have no gradients.
        scheduler: its LR scheduler, or None for a constant LR.
        steps: how many steps to trace.
        group: the param group whose LR is read.

    Returns:
        ``steps`` learning rates: the one the first step uses, then the second's, and so on.

    Raises:
        ValueError: ``steps`` is negative, or a parameter has a gradient (stepping would train it).
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if any(p.grad is not None for g in optimizer.param_groups for p in g["params"]):
        raise ValueError("lr_trace steps the optimizer: give it one on a throw-away parameter without a gradient "
                         "(torch.nn.Linear(1, 1).parameters()), not the model's")
    trace = []
    for _ in range(steps):
        trace.append(float(optimizer.param_groups[group]["lr"]))
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return trace


def plot_waterfall(ablation: Any, *, ax: Any = None) -> Any:
    """The cumulative speed-up from the naive script to the full stack, one bar per fix (log scale).

    Each bar is what the full stack loses when that fix is removed (its contribution on top of the
    other nine, the ablation's "removed" row, coloured by that row's verdict), biggest first, each
    starting where the one before ended. The last bar, "interactions", is what the bars do not add
    up to: the measured full stack over naive divided by their product (fixes that overlap, such
    as workers and decode_once, make it below 1). The dashed line is the measured total.

    Args:
        ablation: a :class:`~course_utils.capstone.ablation_table.Ablation`.
        ax: axes to draw on; a new figure when omitted.

    Returns:
        The matplotlib axes (one bar per fix, then the interactions bar).
    """
    import math

    removed = sorted(((f, c) for k, f, c in ablation.rows() if k == "removed"),
                     key=lambda fc: -fc[1].speedup if math.isfinite(fc[1].speedup) else 0)
    total = ablation.headline().speedup
    ax = _axes(ax, (7, 3.8))
    level = 1.0
    for i, (_, c) in enumerate(removed):
        s = c.speedup if math.isfinite(c.speedup) and c.speedup > 0 else 1.0
        lo, hi = sorted((level, level * s))
        ax.bar(i, hi - lo, bottom=lo, color=verdict_color(c), edgecolor="black", lw=0.5)
        level *= s
    rest = total / level if level > 0 and math.isfinite(total) else 1.0
    lo, hi = sorted((level, level * rest))
    ax.bar(len(removed), hi - lo, bottom=lo, color="white", edgecolor="black", hatch="//", lw=0.5)
    ax.axhline(1.0, color="black", lw=1)
    if math.isfinite(total) and total > 0:
        ax.axhline(total, color="black", lw=1, ls="--")
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    times = FuncFormatter(lambda v, _: f"{v:.3g}×")  # "1.5×", not "1.5 × 10⁰"
    ax.yaxis.set_major_formatter(times)
    ax.yaxis.set_minor_formatter(times)
    ax.set_xticks(range(len(removed) + 1), [f for f, _ in removed] + ["interactions"], rotation=40, ha="right")
    ax.set_ylabel("cumulative speed-up over naive (×, log)")
    ax.set_title(f"from naive to the full stack: {total:.2f}× measured (dashed)\nbar: what removing the fix costs "
                 "the stack; green faster, red slower, grey not resolvable", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.figure.tight_layout()
    return ax

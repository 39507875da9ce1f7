"""Matplotlib figures: speed-up bars with intervals, curves against step and wall time, LR schedules.

matplotlib is imported inside each function and no global style is set, so importing
``course_utils`` changes nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .comparison import Comparison
    from .training import History

__all__ = ["VERDICT_COLORS", "plot_comparison", "plot_curves", "plot_lr", "plot_speedups", "plot_waterfall",
           "verdict_color"]

#: One colour per verdict on every chart (a failed control is not "no effect": its own colour).
VERDICT_COLORS = {"faster": "tab:green", "slower": "tab:red", "not resolvable on this hardware": "tab:gray",
                  "control failed": "tab:orange"}


def verdict_color(result: Any) -> str:
    """The chart colour of a result's verdict.

    ``result`` is anything with a ``verdict``; a seed-level "not resolvable with 3 seeds" is grey.
    """
    from .stats import verdict_kind

    return VERDICT_COLORS[verdict_kind(result.verdict)]


def _axes(ax: Any, figsize: tuple[float, float] = (6, 3.5)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_speedups(rows: Sequence[tuple[str, float, float, float]], *, ax: Any = None,
                  title: str = "speed-up (median, 95 % interval)", colors: Sequence[str] | None = None,
                  xlabel: str = "× faster than baseline (log scale)",
                  legend: Sequence[tuple[str, str]] | None = None) -> Any:
    """Speed-ups as points with their intervals on a log axis; 1.0 (no effect) is marked.

    Args:
        rows: ``(label, value, low, high)`` per row.
        ax: axes to draw on; a new figure when omitted.
        title: the axes title.
        colors: one colour per row; by default green when the interval lies above 1, red when
            below, grey when it includes 1.
        xlabel: the label of the ratio axis.
        legend: ``(colour, meaning)`` pairs, drawn as a legend below the axes; when omitted the
            title names the verdict colours (:data:`VERDICT_COLORS`).

    Returns:
        The matplotlib axes (one errorbar container per row).
    """
    ax = _axes(ax, (6, 1.2 + 0.45 * max(len(rows), 1)))
    for i, (_, value, lo, hi) in enumerate(rows):
        color = colors[i] if colors is not None else (
            "tab:green" if lo > 1 else "tab:red" if hi < 1 else "tab:gray")
        ax.errorbar([value], [i], xerr=[[max(value - lo, 0)], [max(hi - value, 0)]], fmt="o",
                    color=color, capsize=4, ms=6)
    ax.axvline(1.0, color="black", lw=1, ls="--")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xscale("log")
    values = [v for _, value, lo, hi in rows for v in (value, lo, hi) if v > 0] + [1.0]
    left, right = min(values) / 1.25, max(values) * 1.25
    ax.set_xlim(left, right)
    nice = [m * 10.0**e for e in range(-3, 4) for m in (1, 2, 5)]
    ticks = [t for t in nice if left <= t <= right]
    if len(ticks) < 3:  # a narrow range: finer ticks
        ticks = [t for t in (m / 10 * 10.0**e for e in range(-3, 4) for m in range(1, 10)) if left <= t <= right]
    from matplotlib.ticker import NullFormatter

    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    if legend:
        from matplotlib.lines import Line2D
        from matplotlib.transforms import ScaledTranslation

        ax.set_title(title, fontsize=10)
        handles = [Line2D([], [], color=c, marker="o", ls="none", label=meaning) for c, meaning in legend]
        below = ax.transAxes + ScaledTranslation(0, -0.5, ax.figure.dpi_scale_trans)  # under the x label
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
                  fontsize=8, frameon=False, ncol=1)
    else:
        ax.set_title(f"{title}\ngreen: faster, red: slower, grey: not resolvable, orange: control failed",
                     fontsize=10)
    with warnings.catch_warnings():  # long row labels: saving with bbox_inches="tight" fits them instead
        warnings.filterwarnings("ignore", message="Tight layout not applied")
        ax.figure.tight_layout()
    return ax


def plot_comparison(comparison: Comparison | Sequence[Comparison], *, ax: Any = None) -> Any:
    """Speed-ups of one or more comparisons, each with its A/A control beneath it.

    Colours follow each comparison's verdict (:data:`VERDICT_COLORS`): a failed control is
    orange whatever its interval shows.
    """
    comps = [comparison] if not isinstance(comparison, Sequence) else list(comparison)
    rows: list[tuple[str, float, float, float]] = []
    colors: list[str] = []
    for c in comps:
        base, trick = c.names
        rows.append((f"{trick} vs {base}", c.speedup, *c.ci))
        rows.append((f"A/A: {base} vs {base}", c.aa_speedup, *c.aa_ci))
        colors += [verdict_color(c), "tab:gray"]
    cover = min((c.aa_coverage for c in comps), default=0.99)
    from .comparison import format_level

    title = (f"speed-up (median, {format_level(comps[0].level)} interval); A/A control "
             f"({cover * 100:.1f} % interval)" if comps else "speed-up")
    return plot_speedups(rows, ax=ax, colors=colors, title=title)


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


def plot_waterfall(ablation: Any, *, ax: Any = None) -> Any:
    """The cumulative speed-up from the naive script to the full stack, one bar per fix (log scale).

    Each bar is what the full stack loses when that fix is removed (its contribution on top of the
    other nine, the ablation's "removed" row, coloured by that row's verdict), biggest first, each
    starting where the one before ended. The last bar, "interactions", is what the bars do not add
    up to: the measured full stack over naive divided by their product (fixes that overlap, such
    as workers and decode_once, make it below 1). The dashed line is the measured total.

    Args:
        ablation: a :class:`~course_utils.ablation.Ablation`.
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

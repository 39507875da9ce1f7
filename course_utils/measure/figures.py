"""The figures of a measurement: speed-up bars with their intervals and A/A controls, coloured by verdict.

matplotlib is imported inside each function and no global style is set, so importing
``course_utils`` changes nothing. Training curves, LR schedules and the ablation's waterfall are in
:mod:`course_utils.results.plots`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .comparison import Comparison

__all__ = ["VERDICT_COLORS", "plot_comparison", "plot_speedups", "verdict_color"]

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
    from .formatting import format_level

    title = (f"speed-up (median, {format_level(comps[0].level)} interval); A/A control "
             f"({cover * 100:.1f} % interval)" if comps else "speed-up")
    return plot_speedups(rows, ax=ax, colors=colors, title=title)

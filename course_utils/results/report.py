"""Read saved results back: one line per measurement, the scoreboard table and its chart.

Every row says what kind of interval it shows, as the measurement recorded it: a comparison's
"95 % order-statistic CI" (its ``interval`` field), a target comparison's "range over seeds (not a
confidence interval)", an effect's own range. Nothing is called a confidence interval that is not
one. Per lesson and machine the scoreboard shows the run of the largest profile (gpu > cpu >
smoke); ``scoreboard(all_profiles=True)`` shows every run.

Every row also names its metric (step time, time to target, saved bytes, peak memory …, from
:func:`~course_utils.results.labels.metric_name`). On the chart, speed rows are coloured by their verdict
(green faster, red slower, grey not resolved); memory rows have a colour of their own, since a
ratio of bytes is neither faster nor slower and its direction depends on how the lesson divided;
the legend says what each colour used means.
"""

from __future__ import annotations

import html
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .labels import TARGET_RANGE as TARGET_RANGE
from .labels import _num, describe, interval_kind, is_memory, metric_name
from .store import CLAIMS, load_result, profile_rank, reference_files, result_files, results_dir

__all__ = ["ChartData", "Scoreboard", "describe", "headline_value", "interval_kind", "row_color", "row_label",
           "scoreboard"]

_HEAD = ("lesson", "machine", "profile", "metric", "measured here", "interval", "source claims")


def headline_value(measurement: dict[str, Any]) -> tuple[float, float, float] | None:
    """(value, low, high) of a ratio the chart can draw, or None."""
    kind = measurement.get("kind")
    if kind == "comparison":
        return measurement["speedup"], *measurement["ci"]
    if kind == "target_comparison":
        return _num(measurement["ratio"]), _num(measurement["low"]), _num(measurement["high"])
    if kind == "effect" and measurement.get("unit") == "×":
        v = measurement["value"]
        low, high = measurement.get("low"), measurement.get("high")
        return v, v if low is None else low, v if high is None else high
    return None


#: The chart's colours and what each means (its legend shows those present).
SPEED_COLORS: dict[str, str] = {"faster": "tab:green", "slower": "tab:red", "not resolved": "tab:gray"}
MEMORY_COLOR = "tab:blue"
OTHER_COLOR = "tab:purple"
_MEANING: dict[str, str] = {
    SPEED_COLORS["faster"]: "speed: verdict faster",
    SPEED_COLORS["slower"]: "speed: verdict slower",
    SPEED_COLORS["not resolved"]: "speed: not resolved (no verdict either way)",
    MEMORY_COLOR: "memory (saved bytes, peak memory, parameters): a ratio, not a speed; "
                  "which way is better is in the row's description",
    OTHER_COLOR: "another ratio, without a verdict",
}


def row_color(row: dict[str, Any]) -> str:
    """A scoreboard row's colour on the chart.

    A row with a speed verdict (a comparison, a time to target) is green when "faster", red when
    "slower", grey otherwise; a memory row (:func:`~course_utils.results.labels.is_memory`) has its own
    colour whatever its value, since fewer bytes is not "faster"; any other effect without a
    verdict has a third colour rather than one that claims a speed-up.
    """
    verdict = row.get("verdict")
    if row.get("memory"):
        return MEMORY_COLOR
    if verdict is not None:
        key = "faster" if verdict.startswith("faster") else "slower" if verdict.startswith("slower") else ""
        return SPEED_COLORS.get(key, SPEED_COLORS["not resolved"])
    return OTHER_COLOR


def row_label(row: dict[str, Any]) -> str:
    """A row's label on the chart: lesson · metric (the arms compared) · machine · profile."""
    ref = " (ref.)" if row.get("reference") else ""
    names = row.get("names")
    arms = f" ({names[1]} vs {names[0]})" if names and len(names) == 2 else ""
    return f"{row['notebook']} · {row.get('metric') or 'value'}{arms} · {row['machine']}{ref} · {row['profile']}"


@dataclass
class ChartData:
    """What :meth:`Scoreboard.plot` draws: one bar per ratio row, its colour, and the legend."""

    bars: list[tuple[str, float, float, float]]
    colors: list[str]
    legend: list[tuple[str, str]]
    rows: list[dict[str, Any]]
    #: Rows with no finite ratio to draw (an arm that never reached the target): a mark and a note each.
    marks: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Scoreboard:
    """Saved results, one row per lesson, machine and source, beside the source's claim.

    ``hidden`` holds the runs of smaller profiles that a larger one on the same machine outranks.
    """

    rows: list[dict[str, Any]]
    hidden: list[dict[str, Any]] = field(default_factory=list)

    def _table(self) -> list[tuple[str, ...]]:
        return [(r["notebook"], r["machine"] + (" (reference)" if r["reference"] else ""), r["profile"],
                 r["metric"], r["measured"], r["interval"], r["claim"] or "") for r in self.rows]

    def _footer(self) -> str:
        if not self.hidden:
            return ""
        return (f"{len(self.hidden)} run(s) of a smaller profile on the same machine not shown "
                "(cu.results.report.scoreboard(all_profiles=True) lists them).")

    def __str__(self) -> str:
        if not self.rows:
            return "No results saved yet: run a lesson (or `make run`) first."
        table = [_HEAD, *self._table()]
        widths = [max(len(row[i]) for row in table) for i in range(len(_HEAD) - 1)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[-1] for row in table]
        return "\n".join(lines + ([self._footer()] if self.hidden else []))

    def to_markdown(self) -> str:
        """The scoreboard as a Markdown table."""
        if not self.rows:
            return "_No results saved yet._\n"
        lines = ["| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in self._table()]
        return "\n".join(lines + ([f"\n_{self._footer()}_"] if self.hidden else [])) + "\n"

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<p>No results saved yet.</p>"
        head = "".join(f"<th>{h}</th>" for h in _HEAD)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in self._table())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def chart(self) -> ChartData:
        """The chart's bars (label with the metric, value, low, high), colours and legend entries.

        A row whose headline is no finite positive ratio (a target one arm never reached) has no
        bar: it is one of ``marks``, drawn as a mark with its reading, never left out.
        """
        drawn = [r for r in self.rows if r["value"] and all(0 < v < math.inf for v in r["value"])]
        marks = [r for r in self.rows if r not in drawn and r["value"] is not None]
        colors = [row_color(r) for r in drawn]
        order = [*SPEED_COLORS.values(), MEMORY_COLOR, OTHER_COLOR]
        legend = [(c, _MEANING[c]) for c in order if c in colors]
        return ChartData([(row_label(r), *r["value"]) for r in drawn], colors, legend, drawn, marks)

    def plot(self, path: str | Path | None = None) -> Any:
        """Every headline that is a ratio, named by its metric, with its interval and the claim beside it.

        Saved to ``path`` when given. Speed rows are coloured by their verdict, memory rows in a
        colour of their own; the legend says what each colour means (see :meth:`chart`).
        """
        import matplotlib.pyplot as plt
        from matplotlib.transforms import blended_transform_factory

        from ..measure.figures import plot_speedups

        chart = self.chart()
        _, ax = plt.subplots(figsize=(9, 1.9 + 0.62 * max(len(chart.bars) + len(chart.marks), 1)))
        plot_speedups(chart.bars or [("no ratio results yet", 1.0, 1.0, 1.0)], ax=ax,
                      colors=chart.colors or None, legend=chart.legend or None,
                      title="measured effect per lesson: median, interval named at the right",
                      xlabel="ratio, log scale (speed: × faster than the baseline; memory: as the row describes)")
        where = blended_transform_factory(ax.transAxes, ax.transData)
        for i, r in enumerate(chart.rows):
            claim = textwrap.shorten(r["claim"] or "no claim recorded", 90, placeholder=" …")
            what = textwrap.shorten(r["description"], 90, placeholder=" …") + "\n" if r.get("description") else ""
            ax.text(1.02, i, f"{what}{r['interval']}\nsource: {claim}", transform=where, ha="left",
                    va="center", fontsize=7, clip_on=False)
        if chart.marks:  # no ratio to draw: a mark at the side the run lost on, and what happened
            ticks, labels = list(ax.get_yticks()), [t.get_text() for t in ax.get_yticklabels()]
            lo, hi = ax.get_xlim()
            for j, r in enumerate(chart.marks, start=len(chart.bars)):
                only_base = r["value"][0] == 0
                ax.plot([lo if only_base else hi], [j], marker="<" if only_base else ">", markersize=10,
                        color=row_color(r), clip_on=False)
                ax.text(1.02, j, textwrap.shorten(r["measured"], 90, placeholder=" …") + "\nno ratio: "
                        "a run that never reached the target counts as infinitely slow", transform=where,
                        ha="left", va="center", fontsize=7, clip_on=False)
                ticks.append(j)
                labels.append(row_label(r))
            ax.set_yticks(ticks, labels)
            ax.set_ylim(-0.6, len(ticks) - 0.4)
        if path is not None:
            ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return ax


def _row(path: Path, d: dict[str, Any], reference: bool) -> dict[str, Any]:
    m, key = d["measurements"][d["headline"]], d["headline"]
    return {"notebook": d["notebook"], "machine": d["machine"], "profile": d.get("profile") or "?",
            "reference": reference, "metric": metric_name(m, key), "memory": is_memory(m, key),
            "description": m.get("description") if isinstance(m, dict) else None,
            "measured": describe(m), "interval": interval_kind(m),
            "value": headline_value(m), "verdict": m.get("verdict"), "saved_at": d.get("saved_at") or "",
            "names": m.get("names") if isinstance(m, dict) else None,
            "claim": CLAIMS.get(d["notebook"], d.get("claim")), "path": str(path)}


def _partial(d: dict[str, Any]) -> bool:
    """Whether a saved result is a partial run (``make speedrun`` stopped early): kept, not on the scoreboard."""
    return d.get("measurements", {}).get("partial") is True


def scoreboard(root: str | Path | None = None, *, all_profiles: bool = False) -> Scoreboard:
    """Read every saved result into a :class:`Scoreboard`.

    Args:
        root: the results folder (:func:`~course_utils.results.store.results_dir` by default); its
            ``reference/`` and the references shipped with the package are read too.
        all_profiles: one row per run; by default, per lesson, machine and source only the run of
            the largest profile (then the newest) is shown, the others are counted in ``hidden``.
    """
    folder = Path(root) if root is not None else results_dir()
    rows = []
    for reference, paths in ((False, result_files(folder)), (True, reference_files(folder))):
        rows += [_row(p, d, reference) for p in paths
                 if (d := load_result(p)) is not None and not _partial(d)]
    shown, hidden = rows, []
    if not all_profiles:
        best: dict[tuple[str, str, bool], dict[str, Any]] = {}
        for r in sorted(rows, key=lambda r: (profile_rank(r["profile"]), r["saved_at"]), reverse=True):
            best.setdefault((r["notebook"], r["machine"], r["reference"]), r)
        shown = list(best.values())
        kept = {id(r) for r in shown}
        hidden = [r for r in rows if id(r) not in kept]
    shown.sort(key=lambda r: (r["notebook"], r["reference"], r["machine"], -profile_rank(r["profile"])))
    return Scoreboard(shown, hidden)

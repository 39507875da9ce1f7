"""Read saved results back: one line per measurement, the scoreboard table and its chart.

Every row says what kind of interval it shows, as the measurement recorded it: a comparison's
"95 % order-statistic CI" (its ``interval`` field), a target comparison's "range over seeds (not a
confidence interval)", an effect's own range. Nothing is called a confidence interval that is not
one. Per lesson and machine the scoreboard shows the run of the largest profile (gpu > cpu >
smoke); ``scoreboard(all_profiles=True)`` shows every run.
"""

from __future__ import annotations

import html
import json
import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .results import CLAIMS, Effect, load_result, profile_rank, reference_files, result_files, results_dir

__all__ = ["Scoreboard", "describe", "headline_value", "interval_kind", "scoreboard"]

TARGET_RANGE = "range over seeds (not a confidence interval)"
_HEAD = ("lesson", "machine", "profile", "measured here", "interval", "source claims")


def _seeds(m: dict[str, Any]) -> int:
    seeds = m.get("seeds")
    return len(seeds) if isinstance(seeds, (list, tuple)) else int(seeds or 0)


def _num(x: Any) -> float:
    """A saved number; JSON has no infinity, so ``to_dict`` stores it as the string ``"inf"``."""
    return float(x)


def describe(measurement: Any) -> str:
    """One line for a saved measurement: value, bounds and verdict (see :func:`interval_kind`)."""
    m = measurement if isinstance(measurement, dict) else {}
    kind = m.get("kind")
    if kind == "comparison":
        lo, hi = m["ci"]
        return f"{m['speedup']:.2f}× [{lo:.2f}, {hi:.2f}] {m['verdict']}"
    if kind == "target_comparison":
        r, lo, hi = (_num(m[k]) for k in ("ratio", "low", "high"))
        return f"{r:.2f}× [{lo:.2f}, {hi:.2f}] over {_seeds(m)} seeds: {m['verdict']}"
    if kind == "effect":
        known = Effect.__dataclass_fields__
        e = Effect(**{k: v for k, v in m.items() if k in known})
        bounds = f" [{e.low:.3g}, {e.high:.3g}]" if e.low is not None and e.high is not None else ""
        return f"{e.description}: {e.value:.3g}{e.unit}{bounds}"
    if kind == "target":
        med, steps = m.get("median_steps"), [s for s in m.get("steps", []) if s is not None]
        if med is None:
            return f"target {m['target']:.0%} not reached by most seeds"
        spread = f" [{min(steps)}, {max(steps)}]" if steps else ""
        return f"{med:g} steps to {m['target']:.0%}{spread} (median of {_seeds(m)} seeds)"
    if kind == "timing":
        return f"{m['label']}: {m['median_s'] * 1e3:.3g} ms per call"
    return json.dumps(measurement)[:60]


def interval_kind(measurement: Any) -> str:
    """What the bounds :func:`describe` shows are: read from the measurement, never assumed."""
    m = measurement if isinstance(measurement, dict) else {}
    kind = m.get("kind")
    if kind == "comparison":  # results saved before the engine recorded it: a percentile bootstrap
        return m.get("interval") or "bootstrap interval (nominal 95 %, covers less)"
    if kind == "target_comparison":
        return m.get("interval") or TARGET_RANGE
    if kind == "effect":
        has_bounds = m.get("low") is not None and m.get("high") is not None
        return (m.get("interval") or "range (kind not recorded)") if has_bounds else "single value, no interval"
    if kind == "target":
        return "range over seeds (not a confidence interval)"
    if kind == "timing":
        return "median of repeated measurements"
    return ""


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


def _color(row: dict[str, Any]) -> str:
    verdict, (_, lo, hi) = row["verdict"], row["value"]
    if verdict is not None:
        faster, slower = verdict.startswith("faster"), verdict.startswith("slower")
        return "tab:green" if faster else "tab:red" if slower else "tab:gray"
    return "tab:green" if lo > 1 else "tab:red" if hi < 1 else "tab:gray"


@dataclass
class Scoreboard:
    """Saved results, one row per lesson, machine and source, beside the source's claim.

    ``hidden`` holds the runs of smaller profiles that a larger one on the same machine outranks.
    """

    rows: list[dict[str, Any]]
    hidden: list[dict[str, Any]] = field(default_factory=list)

    def _table(self) -> list[tuple[str, ...]]:
        return [(r["notebook"], r["machine"] + (" (reference)" if r["reference"] else ""), r["profile"],
                 r["measured"], r["interval"], r["claim"] or "") for r in self.rows]

    def _footer(self) -> str:
        if not self.hidden:
            return ""
        return (f"{len(self.hidden)} run(s) of a smaller profile on the same machine not shown "
                "(cu.scoreboard(all_profiles=True) lists them).")

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

    def plot(self, path: str | Path | None = None) -> Any:
        """Every headline that is a ratio, with its interval, its kind and the claim beside it.

        Saved to ``path`` when given. Colours follow the verdict where there is one.
        """
        import matplotlib.pyplot as plt
        from matplotlib.transforms import blended_transform_factory

        from .plots import plot_speedups

        # an infinite or zero ratio (one arm never reached the target) is listed, not drawn
        drawn = [r for r in self.rows if r["value"] and all(0 < v < math.inf for v in r["value"])]
        bars = [(f"{r['notebook']} · {r['machine']}{' (ref.)' if r['reference'] else ''} · {r['profile']}",
                 *r["value"]) for r in drawn]
        _, ax = plt.subplots(figsize=(9, 1.4 + 0.62 * max(len(bars), 1)))
        plot_speedups(bars or [("no ratio results yet", 1.0, 1.0, 1.0)], ax=ax,
                      colors=[_color(r) for r in drawn] or None,
                      title="measured effect per lesson: median, interval named at the right",
                      xlabel="× better than the baseline: speed, memory or steps (log scale)")
        where = blended_transform_factory(ax.transAxes, ax.transData)
        for i, r in enumerate(drawn):
            claim = textwrap.shorten(r["claim"] or "no claim recorded", 90, placeholder=" …")
            ax.text(1.02, i, f"{r['interval']}\nsource: {claim}", transform=where, ha="left",
                    va="center", fontsize=7, clip_on=False)
        if path is not None:
            ax.figure.savefig(path, dpi=110, bbox_inches="tight")
        return ax


def _row(path: Path, d: dict[str, Any], reference: bool) -> dict[str, Any]:
    m = d["measurements"][d["headline"]]
    return {"notebook": d["notebook"], "machine": d["machine"], "profile": d.get("profile") or "?",
            "reference": reference, "measured": describe(m), "interval": interval_kind(m),
            "value": headline_value(m), "verdict": m.get("verdict"), "saved_at": d.get("saved_at") or "",
            "claim": CLAIMS.get(d["notebook"], d.get("claim")), "path": str(path)}


def scoreboard(root: str | Path | None = None, *, all_profiles: bool = False) -> Scoreboard:
    """Read every saved result into a :class:`Scoreboard`.

    Args:
        root: the results folder (:func:`~course_utils.results.results_dir` by default); its
            ``reference/`` and the references shipped with the package are read too.
        all_profiles: one row per run; by default, per lesson, machine and source only the run of
            the largest profile (then the newest) is shown, the others are counted in ``hidden``.
    """
    folder = Path(root) if root is not None else results_dir()
    rows = []
    for reference, paths in ((False, result_files(folder)), (True, reference_files(folder))):
        rows += [_row(p, d, reference) for p in paths if (d := load_result(p)) is not None]
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

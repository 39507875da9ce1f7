"""How a verdict's numbers print: coverage levels, interval labels, ratios, and a comparison's table.

:class:`~course_utils.measure.comparison.Comparison` prints through here (``str(c)``, ``c.lines()``,
its HTML in a notebook), and the engine, sweeps and the capstone's ablation word their levels with
:func:`format_level`. Numbers in, text out: nothing here measures or decides. The sentences that
state a result's numbers are in :mod:`course_utils.measure.wording`.
"""

from __future__ import annotations

import math
from typing import Any

from ..units import format_seconds

__all__ = ["decimals", "footer", "format_level", "format_ratio", "format_times", "interval_label", "table_html",
           "table_lines"]


def format_level(level: float) -> str:
    """A coverage level as printed: "95 %", "99.75 %" (no rounding up to a false 100 %)."""
    return f"{level * 100:.4g} %"


def interval_label(level: float, coverage: float, *, rounds_word: str = "rounds",
                   family: tuple[int, float | None] = (1, None)) -> str:
    """How the interval of a comparison is described wherever it is shown.

    ``family`` = ``(rows, table level)`` for one row of a table whose intervals hold together.
    """
    text = (f"distribution-free {format_level(level)} interval for the median ratio, for independent "
            f"{rounds_word} (order statistics; covers {coverage * 100:.2f} %)")
    rows, table = family
    if rows > 1 and table is not None:
        text += (f"; one of {rows} rows whose intervals hold together with at least {format_level(table)}: "
                 f"at most a {format_level(1 - table)} chance that any row's verdict is false")
    return text


def decimals(*values: float) -> int:
    """Decimals that keep printed values apart and off 1.00 when they are not 1 (2 to 4)."""
    vals = [v for v in values if math.isfinite(v)]
    for d in (2, 3, 4):
        shown = {v: f"{v:.{d}f}" for v in [*vals, 1.0]}
        if len(set(shown.values())) == len(shown):  # different values print differently, none as 1 but 1
            return d
    return 4


def format_ratio(x: float) -> str:
    """A ratio for the table: 3 decimals, or 3 significant digits below 0.01 (a compile: 6.12e-05)."""
    return f"{x:.3g}" if 0 < x < 0.01 else f"{x:.3f}"


def format_times(x: float, d: int = 2) -> str:
    """How many times the time: 1.39×, 16,400× (no false decimals on a huge ratio); ``d`` decimals below 100."""
    if not math.isfinite(x):
        return "∞×" if x > 0 else "n/a"
    return f"{x:,.3g}×".replace("e+0", "e") if x >= 1e6 else (f"{x:,.0f}×" if x >= 100 else f"{x:.{d}f}×")


def _rows(c: Any) -> list[tuple[str, str, str, str]]:
    return [(name, format_seconds(t), f"{cv * 100:.1f} %", "–" if math.isnan(f) else format_seconds(f))
            for name, t, cv, f in zip(c.names, c.median_s, c.cv, c.first_call_s)]


def footer(c: Any) -> str:
    """How a comparison was measured and read, in one line (under its table)."""
    threads = f"{c.num_threads} thread{'s' if c.num_threads != 1 else ''}"
    calls = c.calls_per_round if c.trick_calls_per_round in (None, c.calls_per_round) \
        else f"{c.calls_per_round} / {c.trick_calls_per_round}"
    how = c.method or (f"interleaved rounds (random Latin-square orders, one untimed call "
                       f"before each block) × {calls} call(s) per arm, {threads}")
    aa = "" if math.isnan(c.aa_coverage) else f"; A/A control: {c.aa_coverage * 100:.1f} % interval"
    carry = "" if c.carry_over is None or c.carry_over_ci is None else (
        f"; carry-over (baseline blocks after the trick / the others) {c.carry_over:.3f}× "
        f"[{c.carry_over_ci[0]:.3f}, {c.carry_over_ci[1]:.3f}] at 99 %")
    return (f"{c.rounds} {how}, {c.device}; speed-up = median of per-round baseline/trick ratios "
            f"(A/B; the baseline's copy A′ serves the A/A control), not the quotient of the arms' own "
            f"medians; {c.interval}{aa}{carry}")


def table_lines(c: Any) -> list[str]:
    """A :class:`~course_utils.measure.comparison.Comparison`'s printed table, line by line."""
    width = max(len(n) for n in c.names) + 2
    out = [f"{'arm':<{width}}{'own median':>14}{'spread (CV)':>14}{'first call':>14}"]
    out += [f"{n:<{width}}{t:>14}{cv:>14}{f:>14}" for n, t, cv, f in _rows(c)]
    out += [
        f"speed-up      {format_ratio(c.speedup)}× [{format_ratio(c.ci[0])}, {format_ratio(c.ci[1])}]"
        f"   (ratio of total times {format_ratio(c.total_ratio)}×)",
        f"A/A control   {c.aa_speedup:.3f}× [{c.aa_ci[0]:.3f}, {c.aa_ci[1]:.3f}]",
        f"verdict       {c.verdict}",
        c.summary(),
        *(f"warning: {w}" for w in c.warnings),
        footer(c),
    ]
    return out


def table_html(c: Any) -> str:
    """The same table as HTML, for a notebook's rich display."""
    rows = "".join(f"<tr><td>{n}</td><td>{t}</td><td>{cv}</td><td>{f}</td></tr>" for n, t, cv, f in _rows(c))
    warn = "".join(f"<p>⚠ {w}</p>" for w in c.warnings)
    return (
        "<table><thead><tr><th>arm</th><th>own median</th><th>spread (CV)</th>"
        f"<th>first call</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<p><b>speed-up</b> {c.speedup:.3f}× [{c.ci[0]:.3f}, {c.ci[1]:.3f}] "
        f"(ratio of total times {c.total_ratio:.3f}×) · "
        f"<b>A/A control</b> {c.aa_speedup:.3f}× [{c.aa_ci[0]:.3f}, {c.aa_ci[1]:.3f}] · "
        f"<b>verdict</b> {c.verdict}</p><p>{c.summary()}</p>{warn}<p><small>{footer(c)}</small></p>"
    )

"""What a saved result means in words: the effect record, its one-line reading, its interval, its metric.

This is the room both sides of a result use: :mod:`course_utils.results.store` (storage) saves
:class:`Effect` records and prints reference headlines with :func:`describe`;
:mod:`course_utils.results.report` (presentation) builds the scoreboard from the same functions. It
imports nothing of the course, so neither of them needs the other to say what a number is.

A saved measurement is a dict with a ``kind``: ``"comparison"`` (interleaved timing),
``"target_comparison"`` (time to a target accuracy over seeds), ``"effect"`` (a memory ratio,
a count …), ``"target"`` (steps to a target) or ``"timing"`` (one function's time per call).
"""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["MEMORY_METRICS", "TARGET_RANGE", "Effect", "describe", "interval_kind", "is_memory", "metric_name"]

#: What the bounds of a time-to-target comparison are (they are not a confidence interval).
TARGET_RANGE = "range over seeds (not a confidence interval)"

#: The metrics :func:`metric_name` gives an effect about memory: never read as "faster" or "slower".
MEMORY_METRICS: tuple[str, ...] = ("saved bytes", "peak memory", "parameter count", "memory", "largest batch")

_MEMORY_UNITS = frozenset({"B", "bytes", "KB", "KiB", "MB", "MiB", "GB", "GiB"})


@dataclass
class Effect:
    """A measured effect that is not a timing comparison (a memory ratio, steps to target …).

    ``low``/``high`` are optional bounds; ``interval`` says what kind they are (for example
    ``"min-max over 5 pairs"``), so that the scoreboard never presents a range as a confidence
    interval. Without bounds the effect is shown as a single value. ``metric`` names what was
    measured in a few words (``"saved bytes"``, ``"peak memory"``, ``"parameter count"`` …);
    when omitted, :func:`metric_name` reads it from ``description`` and ``unit``.
    """

    description: str
    value: float
    low: float | None = None
    high: float | None = None
    unit: str = "×"
    interval: str | None = None
    metric: str | None = None

    def __str__(self) -> str:
        bounds = ""
        if self.low is not None and self.high is not None:
            bounds = f" [{self.low:.3g}, {self.high:.3g}] ({self.interval or 'range'})"
        return f"{self.description}: {self.value:.3g}{self.unit}{bounds}"

    def to_dict(self) -> dict[str, Any]:
        """Return the effect as a JSON-serialisable dict (``kind`` = ``"effect"``)."""
        return {"kind": "effect", **asdict(self)}


def _num(x: Any) -> float:
    """A saved number; JSON has no infinity, so ``to_dict`` stores it as the string ``"inf"``."""
    return float(x)


def _seeds(m: dict[str, Any]) -> int:
    seeds = m.get("seeds")
    return len(seeds) if isinstance(seeds, (list, tuple)) else int(seeds or 0)


def describe(measurement: Any) -> str:
    """One line for a saved measurement: value, bounds and verdict (see :func:`interval_kind`)."""
    m = measurement if isinstance(measurement, dict) else {}
    kind = m.get("kind")
    if kind == "comparison":
        lo, hi = m["ci"]
        return f"{m['speedup']:.2f}× [{lo:.2f}, {hi:.2f}] {m['verdict']}"
    if kind == "target_comparison":
        r, lo, hi = (_num(m[k]) for k in ("ratio", "low", "high"))
        if math.isnan(r) and math.isnan(lo):  # no seed where either arm got there
            return f"neither arm reached {m['target']:.0%} on any of {_seeds(m)} seeds: {m['verdict']}"
        ratios = [_num(x) for x in m.get("steps_ratios") or []]
        if ratios and all(x == 0 for x in ratios) or ratios and all(math.isinf(x) for x in ratios):
            names = m.get("names") or ("the baseline", "the trick")
            arm = names[1] if ratios[0] == 0 else names[0]  # only one arm ever got there, on every seed
            return f"{arm} never reached {m['target']:.0%} on any of {_seeds(m)} seeds: {m['verdict']}"
        return f"{r:.2f}× [{lo:.2f}, {hi:.2f}] over {_seeds(m)} seeds: {m['verdict']}"
    if kind == "effect":
        known = Effect.__dataclass_fields__
        e = Effect(**{k: v for k, v in m.items() if k in known})
        bounds = f" [{e.low:.3g}, {e.high:.3g}]" if e.low is not None and e.high is not None else ""
        return f"{e.description}: {e.value:.3g}{e.unit}{bounds}"
    if kind == "target":
        med, steps = m.get("median_steps"), [s for s in m.get("steps", []) if s is not None]
        if med is None:
            never = sum(s is None for s in m.get("steps", []))
            return f"target {m['target']:.0%} not reached by {never} of {_seeds(m)} seeds"
        spread = f" [{min(steps)}, {max(steps)}]" if steps else ""
        return f"{med:g} steps to {m['target']:.0%}{spread} (median of {_seeds(m)} seeds)"
    if kind == "timing":
        return f"{m['label']}: {m['median_s'] * 1e3:.3g} ms per call"
    if kind == "rate":
        return f"{m['what']} on {m['k']} of {m['n']} seeds: {m['value']:.0%} [{m['low']:.0%}, {m['high']:.0%}]"
    if kind == "rate_comparison":
        (a, b), n = m["rates"], _seeds(m)
        return f"{m['what']} {a:.0%} vs {b:.0%} of {n} seeds (McNemar p = {m['p_value']:.2g}): {m['verdict']}"
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
        return TARGET_RANGE
    if kind == "timing":
        return "median of repeated measurements"
    if kind in ("rate", "rate_comparison"):
        return m.get("interval") or "exact binomial interval"
    return ""


def _effect_metric(description: str, unit: str | None) -> str:
    """The metric of an effect that did not name one, read from its description and unit."""
    d = description.lower()
    if "saved for backward" in d or ("saved" in d and ("byte" in d or "activation" in d)):
        return "saved bytes"
    if "peak" in d:
        return "peak memory"
    if "parameter" in d:
        return "parameter count"
    if "largest" in d and "batch" in d:
        return "largest batch"
    if "memory" in d or (unit or "").strip() in _MEMORY_UNITS:
        return "memory"
    if "steps" in d:
        return "steps"
    if "tim" in d:  # "timing", "time"
        return "time"
    return textwrap.shorten(description, 32, placeholder=" …") or "effect"


def metric_name(measurement: Any, key: str | None = None) -> str:
    """What a saved measurement measured, in a few words: "step time", "time to target", "saved bytes" ….

    Args:
        measurement: a saved measurement (a dict with a ``kind``); its own ``metric`` field wins
            (an :class:`Effect`'s, a time-to-target comparison's "time to target" or "steps to target").
        key: the name it was saved under (``cu.save(..., step_time=...)``); a comparison times
            something, and its key says what (``"step_time"`` → "step time", ``"conversion"`` →
            "conversion time").
    """
    m = measurement if isinstance(measurement, dict) else {}
    kind = m.get("kind")
    if isinstance(m.get("metric"), str) and m["metric"]:  # recorded by the measurement itself
        return m["metric"]
    if kind == "effect":
        return _effect_metric(str(m.get("description", "")), m.get("unit"))
    if kind == "target_comparison":
        return "time to target"
    if kind == "target":
        return "steps to target"
    if kind in ("comparison", "timing"):
        words = " ".join((key or "").replace("_", " ").split())
        if not words:
            return "time per call" if kind == "timing" else "time"
        return words if any(w in words for w in ("time", "throughput", "speed")) else f"{words} time"
    return " ".join((key or "").replace("_", " ").split()) or "value"


def is_memory(measurement: Any, key: str | None = None) -> bool:
    """Whether a measurement is about memory (saved bytes, peak memory, parameter counts …), not speed."""
    return metric_name(measurement, key) in MEMORY_METRICS

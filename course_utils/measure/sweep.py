"""Many arms at once: worker counts, batch sizes, evaluation modes, timed interleaved.

:func:`sweep` is the engine's one measurement loop (:func:`~course_utils.measure.compare.compare` is a
sweep of one arm). Every round runs the baseline, the baseline again (the A/A control) and every
other arm, each in its own timed block of calls sized to last about ``min_round_time``, in random
Latin-square orders, each block preceded by one untimed call (:mod:`course_utils.measure.rounds`). Each arm
is reported as a :class:`~course_utils.measure.comparison.Comparison` against the baseline, all sharing
the same A/A control, so every verdict follows the course's one rule. When the control fails the
sweep runs once more, and both runs are kept. The keyword arguments travel to the engine as one
:class:`~course_utils.measure.options.TimingOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..units import format_seconds
from .clock import check_callable
from .comparison import Comparison
from .engine import CONTROL_KEY, run_checked
from .formatting import format_level
from .options import TimingOptions
from .stats import FASTER, VERDICTS, verdict_kind

__all__ = ["Sweep", "sweep"]


@dataclass
class Sweep:
    """The result of :func:`sweep`: each arm compared with the baseline, one shared A/A control.

    ``comparisons[name]`` (also ``sweep[name]``) is that arm against the baseline; ``times`` holds
    the per-round seconds per call of every arm (the baseline's two copies under its own name and
    ``"A/A control"``); ``items`` the examples per call when throughput was asked for.
    """

    baseline: str
    comparisons: dict[str, Comparison]
    times: dict[str, list[float]]
    items: dict[str, float] | None = None
    unit: str = "example"
    first_call_s: dict[str, float] = field(default_factory=dict)
    first_run: Sweep | None = field(default=None, repr=False)

    def __getitem__(self, name: str) -> Comparison:
        if name not in self.comparisons:
            raise KeyError(f"no arm {name!r} compared with the baseline; arms: {list(self.comparisons)}")
        return self.comparisons[name]

    @property
    def control(self) -> Comparison:
        """Any arm's comparison, for the A/A control they share."""
        return next(iter(self.comparisons.values()))

    @property
    def names(self) -> list[str]:
        """The arms in the order given, baseline first."""
        return [self.baseline, *self.comparisons]

    def median_s(self, name: str) -> float:
        """Median seconds per call of one arm (the baseline's over both of its copies)."""
        if name == self.baseline:
            return next(iter(self.comparisons.values())).median_s[0] * self._items(name)
        return self[name].median_s[1] * self._items(name)

    def throughput(self, name: str) -> float | None:
        """Median items per second of one arm, when ``items`` were given."""
        return None if self.items is None else self.items[name] / self.median_s(name)

    def _items(self, name: str) -> float:
        return 1.0 if self.items is None else self.items[name]

    def by_verdict(self) -> dict[str, list[str]]:
        """The arms grouped by verdict, every verdict present (an empty list when none earned it).

        Keys are ``"faster"``, ``"slower"``, ``"not resolvable on this hardware"`` and
        ``"control failed"``; read a group's meaning with :func:`~course_utils.results.readings.reading`
        on one of its arms rather than comparing verdict strings.
        """
        groups: dict[str, list[str]] = {v: [] for v in VERDICTS}
        for name, c in self.comparisons.items():
            groups[verdict_kind(c.verdict)].append(name)
        return groups

    def best(self) -> str:
        """The fastest arm whose verdict is "faster" than the baseline; the baseline if none is."""
        faster = [n for n, c in self.comparisons.items() if c.verdict == FASTER]
        return max(faster, key=lambda n: self.comparisons[n].speedup) if faster else self.baseline

    def summary(self) -> str:
        """One sentence per arm, each claiming only what its verdict allows."""
        return "\n".join(c.summary() for c in self.comparisons.values())

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(arm, own median per call, speed-up [interval], verdict)`` rows, baseline first."""
        head = next(iter(self.comparisons.values()))
        rows = [(self.baseline, format_seconds(head.median_s[0]),
                 f"A/A {head.aa_speedup:.3f} [{head.aa_ci[0]:.3f}, {head.aa_ci[1]:.3f}]", "control")]
        for name, c in self.comparisons.items():
            rows.append((name, format_seconds(c.median_s[1]),
                         f"{c.speedup:.3f}× [{c.ci[0]:.3f}, {c.ci[1]:.3f}]", c.verdict))
        return rows

    def __str__(self) -> str:
        rows = [("arm", "own median" + (f" per {self.unit}" if self.items else " per call"),
                 f"{'throughput' if self.items else 'speed-up'} vs {self.baseline}", "verdict"),
                *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        head = next(iter(self.comparisons.values()))
        lines.insert(1, "-" * len(lines[0]))
        for name, c in self.comparisons.items():
            lines += [f"warning ({name}): {w}" for w in c.warnings]
        if self.first_run is not None:
            failed = [n for n, c in self.first_run.comparisons.items()
                      if c.carry_failed and c.verdict == "control failed"]
            why = (f"carry-over after {', '.join(failed)}" if failed and self.first_run.control.aa_ci[0] <= 1.0
                   <= self.first_run.control.aa_ci[1] else "two identical arms differed")
            lines.append(f"this is a rerun: in the first run a control failed ({why}; A/A "
                         f"{self.first_run.control.aa_speedup:.3f}× [{self.first_run.control.aa_ci[0]:.3f}, "
                         f"{self.first_run.control.aa_ci[1]:.3f}]); both runs are kept (.first_run)")
        lines.append(f"{head.rounds} interleaved rounds (random Latin-square orders, one untimed call before "
                     f"each block), calls per round set per arm, {head.num_threads} thread(s), {head.device}; "
                     f"speed-up = median of per-round A/B (the baseline's copy A′ serves the A/A control), not "
                     f"the quotient of the arms' own medians; "
                     f"intervals: {head.interval}; A/A control: {head.aa_coverage * 100:.1f} % interval")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "<pre>" + str(self).replace("&", "&amp;").replace("<", "&lt;") + "</pre>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable record (``kind`` = ``"sweep"``)."""
        return {"kind": "sweep", "baseline": self.baseline, "unit": self.unit, "items": self.items,
                "first_call_s": self.first_call_s, "times": self.times,
                "comparisons": {n: c.to_dict() for n, c in self.comparisons.items()},
                "first_run": self.first_run.to_dict() if self.first_run is not None else None}

    def plot(self, ax: Any = None) -> Any:
        """Every arm's speed-up (or throughput ratio) over the baseline, with the A/A control."""
        from .figures import plot_speedups, verdict_color

        rows, colors = [], []
        head = next(iter(self.comparisons.values()))
        for name, c in self.comparisons.items():
            rows.append((f"{name} vs {self.baseline}", c.speedup, *c.ci))
            colors.append(verdict_color(c))
        rows.append((f"A/A: {self.baseline} vs {self.baseline}", head.aa_speedup, *head.aa_ci))
        colors.append("tab:gray")
        what = "throughput" if self.items else "speed-up"
        title = (f"{what} vs {self.baseline} (median, {format_level(head.level)} interval each; "
                 f"A/A control {head.aa_coverage * 100:.1f} %)")
        return plot_speedups(rows, ax=ax, colors=colors, title=title, xlabel=f"× the baseline's {what} (log scale)")


def sweep(
    arms: Mapping[str, Callable[[], Any]],
    *,
    baseline: str | None = None,
    items: Mapping[str, float] | None = None,
    unit: str = "example",
    rounds: int | None = None,
    budget: float | None = None,
    warmup: int = 1,
    num_threads: int | None = None,
    min_round_time: float = 0.02,
    device: torch.device | str | None = None,
    level: float = 0.95,
    min_effect: float = 1.0,
    seed: int = 0,
    rerun: bool = True,
    progress: bool | None = None,
) -> Sweep:
    """Time several arms interleaved round by round, each against the baseline, with an A/A control.

    First calls are timed on their own, then ``warmup`` calls of each arm, then rounds in which
    every arm (and the baseline twice) runs its own number of calls, in random Latin-square
    orders, each block after one untimed call. ``level`` is the whole table's: each arm's interval
    is at ``1 - (1 - level) / arms`` (:func:`~course_utils.measure.stats.family_level`), so that with arms
    that have no effect the chance that *any* of them is called faster or slower is at most
    ``1 - level`` (with per-arm 95 % intervals it was 14-27 % for 4-8 such arms, more with skewed
    noise). The minimum of rounds follows (7 for two arms, 9 for eight). The A/A control guards
    against order and drift effects, not against many looks.

    Args:
        arms: name -> callable taking no arguments, e.g. one epoch or one training step.
        baseline: the arm the others are compared with; the first arm when omitted.
        items: name -> examples per call; the comparisons are then per example (throughput).
        unit: what an item is, for the table ("example", "image", "byte" ...).
        rounds: rounds to run; by default as many as ``budget`` allows (at least the minimum for
            the interval, at most 240).
        budget: seconds the whole sweep may take, warm-up included; by default the profile's
            :data:`~course_utils.measure.clock.BUDGETS` times (number of arms + 1) / 3.
        warmup: untimed calls of each arm after its first call.
        num_threads: torch threads during the sweep (restored afterwards); current if None.
        min_round_time: each arm runs enough calls per block to take about this many seconds.
        device: the device the arms run on; :func:`~course_utils.env.choose_device` if None.
        level: the chance that all the arms' intervals hold together (see above).
        min_effect: a declared minimum speed-up worth a verdict (1.0: any the interval shows).
        seed: seed of the arm orders.
        rerun: when the A/A control fails, run the sweep once more (kept as ``first_run``).
        progress: show a progress bar; by default only when the sweep will take over 5 s.

    Returns:
        A :class:`Sweep` (prints as a table, plots, serialises, ``best()``).

    Raises:
        TypeError: an arm is not callable.
        ValueError: fewer than two arms, an unknown baseline, missing or non-positive items,
            too few rounds, a budget that is not positive, another value out of its range, or a
            ``device`` this machine does not have (checked before any arm runs).
        RuntimeError: an arm raised (the message names it).
    """
    arms = dict(arms)
    if len(arms) < 2:
        raise ValueError(f"a sweep needs at least two arms (a baseline and one more), got {list(arms)}")
    for name, fn in arms.items():
        check_callable(fn, f"arms[{name!r}]")
    baseline = baseline if baseline is not None else next(iter(arms))
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not one of the arms {list(arms)}")
    if items is not None:
        missing = [n for n in arms if n not in items or not items[n] > 0]
        if missing:
            raise ValueError(f"items must give a positive count for every arm; missing or not positive: {missing}")
    opts = TimingOptions.for_arms(len(arms), rounds=rounds, budget=budget, warmup=warmup, num_threads=num_threads,
                                  min_round_time=min_round_time, device=device, level=level, min_effect=min_effect,
                                  seed=seed, rerun=rerun, progress=progress)
    labels = {n: n for n in arms}
    comparisons, m, first_run = run_checked(arms, labels, baseline, opts=opts, items=items, unit=unit,
                                            desc=f"sweep of {len(arms)} arms")
    recorded = {(labels[k] if k != CONTROL_KEY else "A/A control"): v for k, v in m.times.items()}
    result = Sweep(baseline=baseline, comparisons=comparisons, times=recorded,
                   items=dict(items) if items is not None else None, unit=unit,
                   first_call_s=dict((first_run[1] if first_run is not None else m).first_call_s))
    if first_run is not None:  # its first calls were the cold ones, kept above
        result.first_run = Sweep(baseline=baseline, comparisons=first_run[0], times={}, items=result.items,
                                 unit=unit, first_call_s=dict(first_run[1].first_call_s))
    return result



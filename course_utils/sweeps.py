"""Many arms at once: worker counts, batch sizes, evaluation modes, timed interleaved.

:func:`sweep` extends :func:`~course_utils.timing.compare` to more than one trick. Every round
runs the baseline, the baseline again (the A/A control) and every other arm, in an order that
rotates so that each arm takes each position equally often over a block of rounds. Each arm is
then reported as a :class:`~course_utils.comparison.Comparison` against the baseline, all sharing
the same A/A control, so every verdict follows the course's one rule.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from .comparison import FASTER, Comparison, analyze, format_seconds
from .env import choose_device, get_profile
from .stats import min_rounds
from .timing import BUDGETS, MAX_ROUNDS, _check_callable, _threads, _time_calls

__all__ = ["Sweep", "sweep", "rotated_orders"]

_CONTROL = "\x00A/A"  # the baseline's second copy; a key no arm can be given


def rotated_orders(rounds: int, arms: tuple[str, ...], rng: random.Random) -> list[tuple[str, ...]]:
    """Arm orders for ``rounds`` rounds: a shuffled order, then its rotations (a Latin square).

    Within each block of ``len(arms)`` rounds every arm runs once in every position, so a drift
    inside a round cannot favour one arm; each block starts from a fresh shuffle.
    """
    orders: list[tuple[str, ...]] = []
    while len(orders) < rounds:
        base = list(arms)
        rng.shuffle(base)
        orders += [tuple(base[i:] + base[:i]) for i in range(len(base))]
    return orders[:rounds]


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

    def __getitem__(self, name: str) -> Comparison:
        if name not in self.comparisons:
            raise KeyError(f"no arm {name!r} compared with the baseline; arms: {list(self.comparisons)}")
        return self.comparisons[name]

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

    def best(self) -> str:
        """The fastest arm whose verdict is "faster" than the baseline; the baseline if none is."""
        faster = [n for n, c in self.comparisons.items() if c.verdict == FASTER]
        return max(faster, key=lambda n: self.comparisons[n].speedup) if faster else self.baseline

    def summary(self) -> str:
        """One sentence per arm, each claiming only what its verdict allows."""
        return "\n".join(c.summary() for c in self.comparisons.values())

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(arm, median per call, speed-up [interval], verdict)`` rows, baseline first."""
        head = next(iter(self.comparisons.values()))
        rows = [(self.baseline, format_seconds(head.median_s[0]),
                 f"A/A {head.aa_speedup:.3f} [{head.aa_ci[0]:.3f}, {head.aa_ci[1]:.3f}]", "control")]
        for name, c in self.comparisons.items():
            rows.append((name, format_seconds(c.median_s[1]),
                         f"{c.speedup:.3f}× [{c.ci[0]:.3f}, {c.ci[1]:.3f}]", c.verdict))
        return rows

    def __str__(self) -> str:
        rows = [("arm", "median" + (f" per {self.unit}" if self.items else " per call"),
                 f"{'throughput' if self.items else 'speed-up'} vs {self.baseline}", "verdict"),
                *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        head = next(iter(self.comparisons.values()))
        lines.insert(1, "-" * len(lines[0]))
        lines.append(f"{head.rounds} interleaved rounds, {head.calls_per_round} call(s) per arm per round, "
                     f"{head.num_threads} thread(s), {head.device}; intervals: {head.interval}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "<pre>" + str(self).replace("&", "&amp;").replace("<", "&lt;") + "</pre>"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable record (``kind`` = ``"sweep"``)."""
        return {"kind": "sweep", "baseline": self.baseline, "unit": self.unit, "items": self.items,
                "first_call_s": self.first_call_s, "times": self.times,
                "comparisons": {n: c.to_dict() for n, c in self.comparisons.items()}}

    def plot(self, ax: Any = None) -> Any:
        """Every arm's speed-up (or throughput ratio) over the baseline, with the A/A control."""
        from .plots import plot_speedups

        rows, colors = [], []
        head = next(iter(self.comparisons.values()))
        for name, c in self.comparisons.items():
            rows.append((f"{name} vs {self.baseline}", c.speedup, *c.ci))
            colors.append({"faster": "tab:green", "slower": "tab:red"}.get(c.verdict, "tab:gray"))
        rows.append((f"A/A: {self.baseline} vs {self.baseline}", head.aa_speedup, *head.aa_ci))
        colors.append("tab:gray")
        what = "throughput" if self.items else "speed-up"
        return plot_speedups(rows, ax=ax, colors=colors, title=f"{what} vs {self.baseline} (median, "
                             f"{head.level:.0%} interval)", xlabel=f"× the baseline's {what} (log scale)")


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
    seed: int = 0,
    progress: bool | None = None,
) -> Sweep:
    """Time several arms interleaved round by round, each against the baseline, with an A/A control.

    Like :func:`~course_utils.timing.compare` for more than one trick: first calls are timed on
    their own, then ``warmup`` calls of each arm, then rounds in which every arm (and the
    baseline twice) runs the same number of calls, in rotating orders. With many arms, remember
    that each verdict is a 95 % statement: among ten arms with no effect, one may be called
    faster or slower by chance about every other sweep; the A/A control guards against a noisy
    machine, not against many looks.

    Args:
        arms: name -> callable taking no arguments, e.g. one epoch or one training step.
        baseline: the arm the others are compared with; the first arm when omitted.
        items: name -> examples per call; the comparisons are then per example (throughput).
        unit: what an item is, for the table ("example", "image", "byte" ...).
        rounds: rounds to run; by default as many as ``budget`` allows (at least the minimum for
            the interval, at most 240).
        budget: seconds the whole sweep may take, warm-up included; by default the profile's
            :data:`~course_utils.timing.BUDGETS` times (number of arms + 1) / 3, the time a
            compare would give each arm.
        warmup: untimed calls of each arm after its first call.
        num_threads: torch threads during the sweep (restored afterwards); current if None.
        min_round_time: each arm runs enough calls per round to take about this many seconds.
        device: the device the arms run on; :func:`~course_utils.env.choose_device` if None.
        level: coverage of the intervals (0.95 needs at least 6 rounds).
        seed: seed of the arm orders.
        progress: show a progress bar; by default only when the sweep will take over 5 s.

    Returns:
        A :class:`Sweep` (prints as a table, plots, serialises, ``best()``).

    Raises:
        TypeError: an arm is not callable.
        ValueError: fewer than two arms, an unknown baseline, missing or non-positive items,
            too few rounds or a budget that is not positive.
        RuntimeError: an arm raised (the message names it).
    """
    arms = dict(arms)
    if len(arms) < 2:
        raise ValueError(f"a sweep needs at least two arms (a baseline and one more), got {list(arms)}")
    for name, fn in arms.items():
        _check_callable(fn, f"arms[{name!r}]")
    baseline = baseline if baseline is not None else next(iter(arms))
    if baseline not in arms:
        raise ValueError(f"baseline {baseline!r} is not one of the arms {list(arms)}")
    if items is not None:
        missing = [n for n in arms if n not in items or not items[n] > 0]
        if missing:
            raise ValueError(f"items must give a positive count for every arm; missing or not positive: {missing}")
    need = min_rounds(level)
    if rounds is not None and rounds < need:
        raise ValueError(f"rounds must be at least {need} for a {level:.0%} interval, got {rounds}")
    if budget is not None and budget <= 0:
        raise ValueError(f"budget must be positive seconds, got {budget}")
    device = torch.device(device) if device is not None else choose_device()
    if budget is None:
        budget = BUDGETS[get_profile(device)] * (len(arms) + 1) / 3
    keys = (*arms, _CONTROL)
    fns = {**arms, _CONTROL: arms[baseline]}
    label = {**{n: n for n in arms}, _CONTROL: baseline}
    start = time.perf_counter()
    with _threads(num_threads) as threads:
        first = {n: _time_calls(fns[n], n, 1, device) for n in arms}
        for _ in range(warmup):
            for n in arms:
                _time_calls(fns[n], n, 1, device)
        singles = {n: _time_calls(fns[n], label[n], 1, device) for n in arms}
        calls = max(1, math.ceil(min_round_time / max(max(singles.values()), 1e-9)))
        per_round = calls * (sum(singles.values()) + singles[baseline])  # every arm, baseline twice
        budgeted = rounds is None
        if rounds is None:
            left = budget - (time.perf_counter() - start)
            planned = int(min(MAX_ROUNDS, left // max(per_round, 1e-9)))
            rounds = max(need, planned - planned % len(keys))  # whole blocks of rotations
        show = progress if progress is not None else rounds * per_round > 5.0
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=rounds, desc=f"sweep of {len(arms)} arms", leave=False)
        times: dict[str, list[float]] = {k: [] for k in keys}
        try:
            for r, order in enumerate(rotated_orders(rounds, keys, random.Random(seed)), 1):
                for k in order:
                    times[k].append(_time_calls(fns[k], label[k], calls, device))
                if bar is not None:
                    bar.update(1)
                if budgeted and r >= need and r % len(keys) == 0 and time.perf_counter() - start > budget:
                    break
        finally:
            if bar is not None:
                bar.close()
    comparisons = {}
    for name in arms:
        if name == baseline:
            continue
        c = analyze(times[baseline], times[_CONTROL], times[name], names=(baseline, name), level=level,
                    first_call_s=(first[baseline], first[name]), calls_per_round=calls,
                    num_threads=threads, device=device.type)
        if items is not None:
            c = dataclasses.replace(c.per_item((items[baseline], items[name]), unit), names=(baseline, name))
        comparisons[name] = c
    recorded = {label[k] if k != _CONTROL else "A/A control": v for k, v in times.items()}
    return Sweep(baseline=baseline, comparisons=comparisons, times=recorded,
                 items=dict(items) if items is not None else None, unit=unit, first_call_s=first)

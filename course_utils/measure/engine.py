"""The engine's one measurement loop, shared by compare and sweep.

:func:`~course_utils.measure.compare.compare` and :func:`~course_utils.measure.sweep.sweep` both run it: first
calls, warm-up, calls per arm, interleaved rounds with the A/A copy of the baseline, the
comparisons, and one automatic rerun when the control fails. How to time (rounds, budget, warm-up,
device, the verdict's level ...) comes as one :class:`~course_utils.measure.options.TimingOptions`.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ..progress import progress_bar
from . import forcing
from .analysis import analyze, carry_over
from .clock import MAX_ROUNDS, loop_overhead, threads, time_calls
from .comparison import Comparison
from .options import TimingOptions
from .rounds import close, latin_orders, plan_calls, plan_rounds, run_rounds
from .stats import CONTROL_FAILED, STREAK_ROUNDS, family_level

__all__ = ["CONTROL_KEY", "Measured", "measure", "run_checked"]

#: The key of the baseline's second copy (the A/A control); no arm can be given it.
CONTROL_KEY = "\x00A/A"
#: An arm whose call takes less than this (after the loop's own cost) does next to nothing: its
#: ratio measures the cost of calling a Python function, not work (a warning says so).
EMPTY_CALL_S = 5e-7


@dataclass
class Measured:
    """Raw output of :func:`measure`: per-round seconds per call, and how they were taken."""

    times: dict[Hashable, list[float]]
    first_call_s: dict[Hashable, float]
    calls: dict[Hashable, int]
    num_threads: int
    overhead_s: dict[Hashable, float]
    orders: list[tuple[Hashable, ...]] = dataclasses.field(default_factory=list)


def _calibrate(fn: Callable[[], Any], name: str, min_round_time: float, device: torch.device) -> float:
    """Seconds per call, from one call refined by a block of about a tenth of ``min_round_time``."""
    one = time_calls(fn, name, 1, device)
    n = min(1000, math.ceil(0.1 * min_round_time / max(one, 1e-9)))
    return one if n <= 1 else time_calls(fn, name, n, device)


def measure(
    fns: Mapping[Hashable, Callable[[], Any]],
    labels: Mapping[Hashable, str],
    baseline: Hashable,
    *,
    opts: TimingOptions,
    need: int,
    desc: str,
) -> Measured:
    """The measurement loop: first calls, warm-up, calls per arm, interleaved rounds (and the A/A copy).

    The baseline runs under its own key and under the control key, with the same calls per round.
    Each arm's per-call times have the loop's own per-call cost (an empty block) subtracted, never
    below a tenth of the raw time. Of ``opts`` it reads rounds, budget, warm-up, threads, block
    length, device, seed and progress; ``need`` is the fewest rounds the intervals need, ``desc``
    the progress bar's text.
    """
    rounds, budget, min_round_time, device = opts.rounds, opts.budget, opts.min_round_time, opts.device
    keys = (*fns, CONTROL_KEY)
    run = {**fns, CONTROL_KEY: fns[baseline]}
    name = {**labels, CONTROL_KEY: labels[baseline]}
    start = time.perf_counter()
    with threads(opts.num_threads) as nthreads:
        first = {k: time_calls(run[k], name[k], 1, device) for k in fns}
        for _ in range(opts.warmup):
            for k in fns:
                time_calls(run[k], name[k], 1, device)
        single = {k: _calibrate(run[k], name[k], min_round_time, device) for k in fns}
        single[CONTROL_KEY] = single[baseline]
        calls = plan_calls(single, min_round_time, share={CONTROL_KEY: baseline, **{
            k: baseline for k in fns if k != baseline and close(single[k], single[baseline])}})
        overhead = {c: loop_overhead(c, device) for c in set(calls.values())}
        per_round = sum((calls[k] + 1) * single[k] for k in keys)  # +1: the untimed call before each block
        budgeted = rounds is None
        if rounds is None:
            rounds = plan_rounds(per_round, budget - (time.perf_counter() - start), need, len(keys), MAX_ROUNDS,
                                 prefer=STREAK_ROUNDS)
        show = opts.progress if opts.progress is not None else rounds * per_round > 5.0
        bar = progress_bar(rounds, desc, leave=False) if show else None

        def stop(r: int) -> bool:  # planned from one warm call, rounds can overrun a loaded machine
            return (budgeted and r >= need and r % len(keys) == 0
                    and time.perf_counter() - start > budget)

        orders = latin_orders(rounds, keys, random.Random(opts.seed))
        try:
            raw = run_rounds(
                orders,
                lambda k: time_calls(run[k], name[k], calls[k], device),
                flush=lambda k: time_calls(run[k], name[k], 1, device) and None,
                stop=stop,
                on_round=(lambda r: bar.update(1)) if bar is not None else None,
            )
        finally:
            if bar is not None:
                bar.close()
    times = {k: [max(t - overhead[calls[k]], t / 10) for t in v] for k, v in raw.items()}
    n = len(next(iter(raw.values()))) if raw else 0
    return Measured(times=times, first_call_s=first, calls=calls, num_threads=nthreads,
                    overhead_s={k: overhead[calls[k]] for k in keys}, orders=list(orders[:n]))


def _carry_pairs(orders: list[tuple[Hashable, ...]], times: Mapping[Hashable, list[float]], baseline: Hashable,
                 trick: Hashable) -> tuple[list[float], list[float]]:
    """Per round, the baseline copy right after ``trick``'s block and the other copy (rounds where one did)."""
    after, other, previous = [], [], None
    for r, order in enumerate(orders):
        follows = {}
        for i, k in enumerate(order):
            follows[k] = (order[i - 1] if i else previous) == trick
        previous = order[-1]
        if follows[baseline] != follows[CONTROL_KEY]:
            hit, miss = (baseline, CONTROL_KEY) if follows[baseline] else (CONTROL_KEY, baseline)
            after.append(times[hit][r])
            other.append(times[miss][r])
    return after, other


def _empty(m: Measured, k: Hashable, label: str) -> list[str]:
    """A warning when an arm's median call is below :data:`EMPTY_CALL_S`."""
    if not m.times[k] or sorted(m.times[k])[len(m.times[k]) // 2] >= EMPTY_CALL_S:
        return []
    return [f"{label} takes under {EMPTY_CALL_S * 1e6:.1f} µs a call (about the cost of calling a Python "
            "function): it may do nothing, and its ratio measures call overhead, not work"]


def _carry_warning(c: Comparison) -> list[str]:
    """A warning when the trick's block changed the time of the baseline block after it."""
    if not c.carry_failed or c.carry_over is None or c.carry_over_ci is None:
        return []
    lo, hi = c.carry_over_ci
    wlo, whi = c.carry_ci
    word = "slower" if c.carry_over > 1 else "faster"
    stands = c.carry_verdict() == c.verdict != CONTROL_FAILED
    then = ("which gives the same verdict: it stands, though its size may be off by that much" if stands else
            "which no longer gives a verdict: control failed")
    return [f"carry-over: baseline blocks right after {c.names[1]} ran {word} than the others "
            f"({c.carry_over:.3f}× the time, 99 % interval {lo:.3f}–{hi:.3f}): the trick leaves something behind "
            "for the next block (or the machine drifts within rounds), which the untimed call before each block "
            f"does not absorb. Allowing for it, the interval is [{wlo:.3f}, {whi:.3f}], {then}. For an unbiased "
            "figure, time each arm in fresh processes (cu.in_processes)"]


def _compare_all(m: Measured, fns: Mapping[Hashable, Any], labels: Mapping[Hashable, str], baseline: Hashable,
                 opts: TimingOptions, items: Mapping[Hashable, float] | None = None, unit: str = "",
                 ) -> dict[Hashable, Comparison]:
    """Each arm against the baseline, at ``opts.level`` for the whole table, with the carry-over check."""
    out = {}
    rows = len(fns) - 1
    row_level = family_level(opts.level, rows)
    for k in fns:
        if k == baseline:
            continue
        c = analyze(m.times[baseline], m.times[CONTROL_KEY], m.times[k], names=(labels[baseline], labels[k]),
                    level=row_level, first_call_s=(m.first_call_s[baseline], m.first_call_s[k]),
                    calls_per_round=m.calls[baseline], trick_calls_per_round=m.calls[k],
                    num_threads=m.num_threads, device=opts.device.type, min_effect=opts.min_effect,
                    family=(rows, opts.level))
        co, co_ci, _ = carry_over(*_carry_pairs(m.orders, m.times, baseline, k))
        c = dataclasses.replace(c, carry_over=co, carry_over_ci=co_ci)
        c.verdict = c.carry_verdict()  # "control failed" when the carry-over alone could have made the verdict
        c.warnings += _empty(m, baseline, labels[baseline]) + _empty(m, k, labels[k]) + _carry_warning(c)
        if items is not None:
            c = dataclasses.replace(c.per_item((items[baseline], items[k]), unit), names=c.names)
        out[k] = forcing.apply(c)  # a test run's forced verdict (smoke profile only); c otherwise
    return out


def run_checked(fns: Mapping[Hashable, Callable[[], Any]], labels: Mapping[Hashable, str], baseline: Hashable, *,
                opts: TimingOptions, items: Mapping[Hashable, float] | None, unit: str, desc: str,
                ) -> tuple[dict[Hashable, Comparison], Measured, tuple[dict[Hashable, Comparison], Measured] | None]:
    """Measure and compare; when a control failed (A/A, or an arm's carry-over), measure again and keep both.

    With several arms, ``opts.level`` is the table's: each arm's interval is at
    :func:`~course_utils.measure.stats.family_level`, so that all of them hold together with it.
    The rerun (only when ``opts.rerun``) draws its orders with ``opts.seed + 1``.
    Returns the comparisons and measurement that stand, and the failed first run (or None).
    """
    need = opts.check_rounds(len(fns) - 1)
    m = measure(fns, labels, baseline, opts=opts, need=need, desc=desc)
    comps = _compare_all(m, fns, labels, baseline, opts, items, unit)
    if not opts.rerun or all(c.verdict != CONTROL_FAILED for c in comps.values()):
        return comps, m, None
    m2 = measure(fns, labels, baseline, opts=dataclasses.replace(opts, seed=opts.seed + 1), need=need, desc=desc)
    comps2 = _compare_all(m2, fns, labels, baseline, opts, items, unit)
    for k, c in comps2.items():
        c.first_run = comps[k]
        # the arms' first, cold calls (compile, autotune) happened in the first run: the rerun's are warm
        c.first_call_s = comps[k].first_call_s
    return comps2, m2, (comps, m)

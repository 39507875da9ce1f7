"""Interleaved rounds: how many calls each arm gets, in which order, and the loop that runs them.

Pure logic with the clock injected (``block`` and ``flush``), so the same loop runs real arms in
:func:`~course_utils.measure.sweep.sweep` and simulated ones in the tests that prove the error rates.

- **Calls per arm.** Each arm gets its own number of calls per round, so that each of its timed
  blocks lasts about ``min_round_time`` whatever the other arms cost; an arm within 2× of the
  baseline's cost per call gets the baseline's count (:func:`close`). Per-call times taken over
  blocks of different lengths differ by a small fixed cost per block: on the real clock a 4 µs add
  against itself, planned 15,068 against 16,345 calls, read "slower" at 0.995 [0.993, 0.998], and
  the A/A control, whose copy always shares the baseline's count, cannot see that.
- **Orders.** Every block of ``len(keys)`` rounds is a random Latin square: each arm runs once in
  every position, and (unlike plain rotations) an arm's successor changes from round to round,
  so what one arm leaves behind does not always land on the same neighbour.
- **Carry-over.** Before each timed block the arm is called once untimed (``flush``): what the
  previous arm left behind (a cold cache, a queue of freed memory) is paid there, not timed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

__all__ = ["close", "latin_orders", "plan_calls", "plan_rounds", "run_rounds"]

K = TypeVar("K", bound=Hashable)


def close(a: float, b: float, factor: float = 2.0) -> bool:
    """Whether two per-call costs are within ``factor`` of each other (such arms share a call count)."""
    return max(a, b) <= factor * max(min(a, b), 1e-12)


def plan_calls(single_s: dict[K, float], min_round_time: float, share: dict[K, K] | None = None) -> dict[K, int]:
    """Calls per round for each arm: enough for a block of about ``min_round_time`` seconds.

    Args:
        single_s: seconds of one call of each arm.
        min_round_time: seconds a timed block should last at least.
        share: key -> key whose count it must use (the A/A copy uses the baseline's).
    """
    if min_round_time < 0:
        raise ValueError(f"min_round_time must be seconds >= 0 (0: one call per block), got {min_round_time}")
    calls = {k: max(1, math.ceil(min_round_time / max(t, 1e-9))) for k, t in single_s.items()}
    for k, source in (share or {}).items():
        calls[k] = calls[source]
    return calls


def plan_rounds(seconds_per_round: float, budget_left: float, need: int, block: int, max_rounds: int,
                prefer: int = 0) -> int:
    """Rounds that fit ``budget_left``, in whole blocks of ``block`` rounds, at least ``need``.

    ``prefer``: run at least this many when the budget has room for them (whole blocks or not):
    the streak check needs 8 rounds to be able to fire at all.
    """
    fit = int(min(max_rounds, budget_left // max(seconds_per_round, 1e-9)))
    whole = fit - fit % block
    if whole < prefer <= fit:
        whole = prefer
    return max(need, whole)


def latin_orders(rounds: int, keys: Sequence[K], rng: random.Random) -> list[tuple[K, ...]]:
    """Arm orders for ``rounds`` rounds, in blocks that are random Latin squares.

    A block is the cyclic square with its rows, columns and symbols shuffled: every arm takes
    every position once per block, and successors vary. Leftover rounds are a block's first rows.
    """
    n = len(keys)
    orders: list[tuple[K, ...]] = []
    while len(orders) < rounds:
        symbols = list(keys)
        rng.shuffle(symbols)
        rows, cols = list(range(n)), list(range(n))
        rng.shuffle(rows)
        rng.shuffle(cols)
        orders += [tuple(symbols[(r + c) % n] for c in cols) for r in rows]
    return orders[:rounds]


def run_rounds(
    orders: Sequence[Sequence[K]],
    block: Callable[[K], float],
    *,
    flush: Callable[[K], None] | None = None,
    stop: Callable[[int], bool] | None = None,
    on_round: Callable[[int], None] | None = None,
) -> dict[K, list[float]]:
    """Run the rounds: for each arm in each order, ``flush(arm)`` untimed, then ``block(arm)`` timed.

    Args:
        orders: one tuple of arm keys per round (from :func:`latin_orders`).
        block: times one block of an arm, returning seconds per call.
        flush: an untimed call of the arm before its block (None: no flush).
        stop: asked after each round with the rounds done; True ends the loop there.
        on_round: told after each round (a progress bar).

    Returns:
        key -> seconds per call, one value per round run.
    """
    times: dict[K, list[float]] = {k: [] for k in orders[0]} if orders else {}
    for r, order in enumerate(orders, 1):
        for k in order:
            if flush is not None:
                flush(k)
            times[k].append(block(k))
        if on_round is not None:
            on_round(r)
        if stop is not None and stop(r):
            break
    return times

"""Simulated measurements fed through the engine's own orders, round loop, analyze and compare_targets.

The tests in test_stats.py assert the labelled error rates with it; run it as a script to print
the figures (``python tests/engine_sim.py``; with ``PYTHONPATH`` pointing at an older checkout it
measures that engine instead, which is how the closing note's "before" figures were made).

Timing model: every timed block of an arm costs its true time × a log-normal factor (``noise``
per block, independent), and an arm that leaves ``carry`` behind slows the next call after it by
that fraction. In the engine the untimed call before each block pays that carry-over; an engine
without it (the old one) times it.
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass

import numpy as np

import course_utils as cu

#: The interleaved-rounds module of the engine under test (0.2: cu.measure.rounds; 0.1: cu.rounds), else None.
ROUNDS = getattr(getattr(cu, "measure", None), "rounds", None) or vars(cu).get("rounds")
NEW = ROUNDS is not None


@dataclass
class Rates:
    """Share of simulated comparisons with each outcome."""

    faster: float
    slower: float
    control_failed: float
    covered: float  # the interval contained the true ratio


def _orders(rounds: int, keys: tuple, rng: random.Random, sweep: bool) -> list[tuple]:
    if NEW:
        return ROUNDS.latin_orders(rounds, keys, rng)
    if sweep:
        return cu.sweeps.rotated_orders(rounds, keys, rng)
    return cu.timing.balanced_orders(rounds, keys, rng)


def _simulate_rounds(true_s: dict, carry: dict, rounds: int, noise: float, rng: np.random.Generator,
                     order_rng: random.Random, sweep: bool) -> dict:
    keys = tuple(true_s)
    state = {"last": None}

    def block(k):
        t = true_s[k] * math.exp(rng.normal(0.0, noise))
        if state["last"] is not None and state["last"] != k:
            t *= 1.0 + carry.get((state["last"], k), carry.get(state["last"], 0.0))
        state["last"] = k
        return t

    def flush(k):
        state["last"] = k  # the untimed call pays whatever the previous arm left behind

    orders = _orders(rounds, keys, order_rng, sweep)
    if NEW:
        return ROUNDS.run_rounds(orders, block, flush=flush)
    times = {k: [] for k in keys}
    for order in orders:
        for k in order:
            times[k].append(block(k))
    return times


def timing_rates(*, effect: float = 1.0, rounds: int = 12, noise: float = 0.10, carry: float = 0.0,
                 runs: int = 2000, seed: int = 0) -> Rates:
    """One trick (``effect``× faster) against the baseline and its A/A copy; the trick leaves ``carry``."""
    rng, order_rng = np.random.default_rng(seed), random.Random(seed)
    true_s = {"A": 1e-3, "A2": 1e-3, "B": 1e-3 / effect}
    out = {"faster": 0, "slower": 0, "control failed": 0, "covered": 0}
    for _ in range(runs):
        t = _simulate_rounds(true_s, {"B": carry}, rounds, noise, rng, order_rng, sweep=False)
        c = cu.measure.analysis.analyze(t["A"], t["A2"], t["B"])
        out[c.verdict] = out.get(c.verdict, 0) + 1
        out["covered"] += c.ci[0] <= effect <= c.ci[1]
    return Rates(out["faster"] / runs, out["slower"] / runs, out["control failed"] / runs, out["covered"] / runs)


#: Block-time noise shapes (multiplicative factors on a block's true time), the skewed ones real clocks show.
SHAPES = {
    "log-normal 10 %": lambda rng, n: np.exp(rng.normal(0.0, 0.10, n)),
    "floor + exponential delays": lambda rng, n: (1.0 + rng.exponential(0.05, n)
                                                  + (rng.random(n) < 0.2) * rng.exponential(0.3, n)),
    "log-t3": lambda rng, n: np.exp(0.10 * rng.standard_t(3, n)),
    "5x stalls in 2 % of blocks": lambda rng, n: (1.0 + rng.exponential(0.05, n)) * np.where(rng.random(n) < 0.02,
                                                                                           5.0, 1.0),
}


def shaped_rates(shape: str, *, rounds: int, effect: float = 1.0, runs: int = 2000, seed: int = 0,
                 statistic=None) -> Rates:
    """Comparisons of independent blocks with noise ``shape`` through ``cu.measure.analysis.analyze``
    (the arm order does
    not matter for independent blocks, so the times are drawn directly). ``statistic(a, a2, b)``
    replaces the engine's per-round ratio (to show what the old one did)."""
    rng = np.random.default_rng(seed)
    draw = SHAPES[shape]
    out = {"faster": 0, "slower": 0, "control failed": 0, "covered": 0}
    for _ in range(runs):
        a, a2, b = (1e-3 * draw(rng, rounds) for _ in range(3))
        b = b / effect
        ratios = None if statistic is None else statistic(a, a2, b)
        c = cu.measure.analysis.analyze(a, a2, b, ratios=ratios)
        out[c.verdict] = out.get(c.verdict, 0) + 1
        out["covered"] += c.ci[0] <= effect <= c.ci[1]
    return Rates(out["faster"] / runs, out["slower"] / runs, out["control failed"] / runs, out["covered"] / runs)


def sweep_wrong_rate(*, arms: int = 4, rounds: int = 30, noise: float = 0.10, carry: float = 0.05,
                     runs: int = 1000, seed: int = 0) -> float:
    """Share of sweeps of ``arms`` null arms with at least one "faster"/"slower" verdict.

    Carry-over is pair-specific (what arm i leaves behind slows arm j by up to ``carry``), so a
    fixed successor within a block biases that pair.
    """
    rng, order_rng = np.random.default_rng(seed), random.Random(seed)
    keys = ["A", "A2", *(f"x{i}" for i in range(arms))]
    true_s = {k: 1e-3 for k in keys}
    wrong = 0
    for _ in range(runs):
        pair = {(p, q): rng.uniform(0, carry) for p in keys for q in keys if p != q}
        t = _simulate_rounds(true_s, pair, rounds, noise, rng, order_rng, sweep=True)
        verdicts = [cu.measure.analysis.analyze(t["A"], t["A2"], t[k]).verdict for k in keys[2:]]
        wrong += any(v in ("faster", "slower") for v in verdicts)
    return wrong / runs


def target_false_rate(*, seeds: int, step_ratio: float = 1.0, steps_noise: float = 0.15,
                      time_noise: float = 0.03, grid: int = 25, interleaved: bool = True,
                      runs: int = 2000, seed: int = 0) -> dict:
    """Seed-level verdicts when both arms need the same steps in truth.

    Per seed, each arm's crossing is ``300 × exp(N(0, steps_noise))`` steps, seen on an
    evaluation grid of ``grid`` steps (the old engine rounds up to the grid; the new one
    interpolates, modelled as the exact crossing). The trick's step takes ``step_ratio`` × the
    baseline's. ``interleaved``: step times come from an interleaved comparison (12 simulated
    rounds with ``time_noise`` per block); else from separate runs of each arm (each its own
    noisy median), the old default path.
    """
    rng, order_rng = np.random.default_rng(seed), random.Random(seed)
    faster = slower = 0
    for _ in range(runs):
        base_steps, trick_steps = [], []
        for _s in range(seeds):
            b, t = (300 * math.exp(rng.normal(0, steps_noise)) for _ in range(2))
            if NEW:
                base_steps.append(b)
                trick_steps.append(t)
            else:
                base_steps.append(int(math.ceil(b / grid) * grid))
                trick_steps.append(int(math.ceil(t / grid) * grid))
        st_b = 1e-3 * math.exp(rng.normal(0, time_noise))
        st_t = 1e-3 * step_ratio * math.exp(rng.normal(0, time_noise))
        base = cu.TargetResult("b", 0.8, list(range(seeds)), base_steps, st_b)
        trick = cu.TargetResult("t", 0.8, list(range(seeds)), trick_steps, st_t)
        comparison = None
        if interleaved:
            times = _simulate_rounds({"A": 1e-3, "A2": 1e-3, "B": 1e-3 * step_ratio}, {}, 12, time_noise,
                                     rng, order_rng, sweep=False)
            comparison = cu.measure.analysis.analyze(times["A"], times["A2"], times["B"])
        v = cu.compare_targets(base, trick, step_comparison=comparison).verdict
        faster += v == "faster"
        slower += v == "slower"
    return {"faster": faster / runs, "slower": slower / runs}


def main() -> None:
    """Print the figures of the closing note for the engine on sys.path."""
    print(f"engine: {cu.__file__} ({'new' if NEW else 'old'})")
    old = lambda a, a2, b: np.sqrt(a * a2) / b  # noqa: E731
    for shape in SHAPES:
        for rounds in (6, 12, 30, 120, 240):
            r, o = shaped_rates(shape, rounds=rounds, runs=2000), shaped_rates(shape, rounds=rounds, runs=2000,
                                                                                  statistic=old)
            print(f"{shape}, {rounds} rounds, null: faster/slower {r.faster:.3f}/{r.slower:.3f} (old statistic "
                  f"{o.faster:.3f}/{o.slower:.3f}), control failed {r.control_failed:.3f}, coverage {r.covered:.3f}")
        p = shaped_rates(shape, rounds=12, effect=1.2, runs=2000, seed=1)
        print(f"{shape}, 12 rounds, 1.2x: power {p.faster:.3f}")
    for rounds in (6, 12, 30):
        r = timing_rates(rounds=rounds)
        print(f"null, {rounds} rounds, 10 % noise: faster {r.faster:.3f} slower {r.slower:.3f} "
              f"control failed {r.control_failed:.3f} coverage {r.covered:.3f}")
    for rounds in (6, 12, 30):
        r = timing_rates(effect=1.2, rounds=rounds)
        print(f"1.2x, {rounds} rounds, 10 % noise: power {r.faster:.3f}")
    for rounds in (6, 12, 30):
        r = timing_rates(effect=1.2, rounds=rounds, carry=0.05, noise=0.02)
        print(f"1.2x, {rounds} rounds, 2 % noise, 5 % carry-over: coverage {r.covered:.3f}")
    for rounds in (12, 30):
        print(f"sweep of 4 null arms, {rounds} rounds, 5 % pair carry-over: P(any wrong) "
              f"{sweep_wrong_rate(rounds=rounds):.3f}")
    for seeds in (3, 5, 6, 10):
        for inter in (False, True):
            r = target_false_rate(seeds=seeds, interleaved=inter, runs=1000)
            print(f"targets, equal arms, {seeds} seeds, {'interleaved' if inter else 'separate runs'}: "
                  f"faster {r['faster']:.3f} slower {r['slower']:.3f}")
    for seeds in (5, 6, 10):
        r = target_false_rate(seeds=seeds, step_ratio=1.1, steps_noise=0.0, runs=1000)
        print(f"targets, equal steps, trick 10 % slower per step, {seeds} seeds: called faster {r['faster']:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

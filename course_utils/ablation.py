"""The capstone's ablation: each fix alone and each fix removed, seeds as rounds, with A/A copies.

Every seed is one round: every arm runs once on that seed (the same initial weights and batch
order for all of them), in a random order drawn per seed. The naive script and the full stack
each run twice per seed, so every comparison has its A/A control. A comparison reads the
per-seed times to target through the engine's :func:`~course_utils.comparison.analyze` (the
geometric mean of the baseline's two copies over the arm's time, its distribution-free interval
for the median, the control's interval), so its verdict and error rates are the engine's, with
seeds for rounds: at 6 seeds the interval is [min, max] of the per-seed ratios (96.9 %).

A run that never reached the target counts as infinitely slow for that seed; a seed on which
both sides of a ratio never got there leaves the comparison without a verdict.
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .comparison import Comparison, analyze, range_only
from .fixes import FIXES, Stack
from .stats import MIN_SEEDS, UNRESOLVED

if TYPE_CHECKING:
    import torch

    from .fixes import SpeedConfig
    from .speedrun import Prepared, RunResult

__all__ = ["Ablation", "SEED_METHOD", "ablate", "ablation_arms"]

NAIVE, FULL = Stack.naive().name, Stack.full().name
#: The A/A copies' names.
NAIVE_COPY, FULL_COPY = f"{NAIVE} (A/A copy)", f"{FULL} (A/A copy)"
#: How an ablation comparison was measured (printed with it).
SEED_METHOD = ("seeds as rounds (every arm once per seed on the same weights and batches, arms in a random "
               "order per seed; naive script and full stack twice, for the A/A control)")


def ablation_arms(fixes: Iterable[str] = FIXES) -> dict[str, Stack]:
    """The arms: naive and full stack (each twice), naive + each fix, full stack − each fix."""
    fixes = list(fixes)
    Stack.naive(fixes)  # the same check and message for a misspelt name
    arms = {NAIVE: Stack.naive(), NAIVE_COPY: Stack.naive(), FULL: Stack.full(), FULL_COPY: Stack.full()}
    for fix in fixes:
        arms[Stack.naive([fix]).name] = Stack.naive([fix])
        arms[Stack.full([fix]).name] = Stack.full([fix])
    return arms


@dataclass
class Ablation:
    """Times to target per arm and seed (None: the budget ran out first), and the orders run."""

    target: float
    seeds: list[int]
    fixes: list[str]
    times: dict[str, list[float | None]]
    orders: list[list[str]] = field(default_factory=list)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def compare(self, baseline: str, trick: str) -> Comparison:
        """``baseline`` (naive or full stack, with its A/A copy) against the arm ``trick``, seed by seed.

        The speed-up is baseline time / trick time (> 1: the trick reached the target sooner).
        """
        copy = {NAIVE: NAIVE_COPY, FULL: FULL_COPY}.get(baseline)
        if copy is None:
            raise ValueError(f"the baseline is {NAIVE!r} or {FULL!r} (they have A/A copies), got {baseline!r}")
        if trick not in self.times:
            raise ValueError(f"no arm {trick!r}; the arms are {', '.join(self.times)}")
        return compare_times(self.times[baseline], self.times[copy], self.times[trick], names=(baseline, trick))

    def rows(self) -> list[tuple[str, str, Comparison]]:
        """Every fix twice: ("alone", fix, naive vs naive + fix) and ("removed", fix, full − fix vs full).

        A removed row reads like an alone row: its speed-up > 1 when the fix helps (full stack's
        time over the full stack without it, as a speed-up of having it).
        """
        out = []
        for fix in self.fixes:
            out.append(("alone", fix, self.compare(NAIVE, Stack.naive([fix]).name)))
            removed = self.compare(FULL, Stack.full([fix]).name)
            out.append(("removed", fix, _inverted(removed, (Stack.full([fix]).name, FULL))))
        return out

    def headline(self) -> Comparison:
        """The full stack against the naive script: the stacked speed-up in time to target."""
        return self.compare(NAIVE, FULL)

    def run_table(self, arms: Sequence[str] = (NAIVE, FULL)) -> str:
        """Medians over the seeds per arm: time to target, steps, step time, data wait, accuracies."""
        med = lambda xs: statistics.median(xs) if xs else math.nan  # noqa: E731
        lines = [f"{'medians over ' + str(len(self.seeds)) + ' seeds':<24}{'to target':>10}{'steps':>7}"
                 f"{'ms/step':>9}{'data wait':>11}{'val acc':>9}{'test acc':>9}"]
        for arm in arms:
            runs = self.runs.get(arm, [])
            reached = [t for t in self.times[arm] if t is not None]
            to_target = f"{med(reached):.2f} s" if len(reached) == len(self.times[arm]) else (
                f"{len(reached)}/{len(self.times[arm])} got")
            steps = med([r["steps"] for r in runs])
            step_ms = med([r["step_s"] * 1e3 for r in runs if r.get("step_s") is not None])
            lines.append(f"{arm:<24}{to_target:>10}{steps:>7.0f}{step_ms:>9.1f}"
                         f"{med([r['data_share'] for r in runs]):>11.0%}{med([r['val_accuracy'] for r in runs]):>9.1%}"
                         f"{med([r['test_accuracy'] for r in runs]):>9.1%}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The ablation as JSON values (``kind`` = ``"ablation"``), with every comparison."""
        return {"kind": "ablation", "target": self.target, "seeds": self.seeds, "fixes": self.fixes,
                "times": self.times, "orders": self.orders, "runs": self.runs,
                "headline": self.headline().to_dict(),
                "rows": [{"kind": k, "fix": f, **c.to_dict()} for k, f, c in self.rows()]}

    def __str__(self) -> str:
        lines = [f"time to {self.target:.0%} validation accuracy over {len(self.seeds)} seeds ({SEED_METHOD})",
                 f"{'':<9}{'fix':<21}{'speed-up':>9}  interval            verdict"]
        for kind, fix, c in [("stack", "all ten", self.headline()), *self.rows()]:
            lines.append(f"{kind:<9}{fix:<21}{c.speedup:>8.2f}×  [{c.ci[0]:.2f}, {c.ci[1]:.2f}]"
                         f"{'':<8}{c.verdict}")
        return "\n".join(lines)


def _inverted(c: Comparison, names: tuple[str, str]) -> Comparison:
    """A comparison read the other way round: a speed-up of having the fix, not a slow-down of removing it."""
    flip = {"faster": "slower", "slower": "faster"}
    inv = lambda x: math.inf if x == 0 else 1.0 / x  # noqa: E731
    ratios = [inv(r) for r in c.ratios]
    return dataclasses.replace(c, names=names, speedup=statistics.median(ratios), ci=(inv(c.ci[1]), inv(c.ci[0])),
                               median_s=(c.median_s[1], c.median_s[0]), cv=(c.cv[1], c.cv[0]),
                               ratios=ratios,
                               total_ratio=inv(c.total_ratio), verdict=flip.get(c.verdict, c.verdict))


def compare_times(baseline: Sequence[float | None], control: Sequence[float | None], trick: Sequence[float | None],
                  *, names: tuple[str, str]) -> Comparison:
    """The engine's comparison of per-seed times to target (None: never reached, read as infinitely slow).

    Fewer than 6 seeds, or a seed where neither side of a ratio reached the target, give no
    verdict ("not resolvable on this hardware", with a warning that says why).
    """
    import numpy as np

    n = len(baseline)
    if not n == len(control) == len(trick):
        raise ValueError(f"every arm needs one time per seed, got {n}, {len(control)}, {len(trick)}")
    vals = [np.asarray([math.inf if t is None else t for t in x], dtype=float) for x in (baseline, control, trick)]
    if n < MIN_SEEDS:
        return range_only(*vals, names=names, rounds_word=f"seed{'s' if n != 1 else ''}", method=SEED_METHOD)
    finite = np.concatenate([x[np.isfinite(x)] for x in vals])
    proxy = 1e6 * (finite.max() if finite.size else 1.0)  # never reached: later than any real run, ranks kept
    both_missed = any(not (math.isfinite(x[i]) or math.isfinite(y[i]))
                      for x, y in ((vals[0], vals[2]), (vals[1], vals[2]), (vals[0], vals[1])) for i in range(n))
    c = analyze(*(np.where(np.isfinite(x), x, proxy) for x in vals), names=names)
    if finite.size < 3 * n:  # ratios that involve a proxy are 0 or infinite, say so
        real = lambda r: 0.0 if r < 1e-4 else math.inf if r > 1e4 else r  # noqa: E731
        c = dataclasses.replace(c, speedup=real(c.speedup), ci=(real(c.ci[0]), real(c.ci[1])),
                                ratios=[real(r) for r in c.ratios], aa_ratios=[real(r) for r in c.aa_ratios],
                                total_ratio=math.nan, median_s=tuple(real(m) for m in c.median_s))
    c.method = SEED_METHOD
    if both_missed:
        c = dataclasses.replace(c, verdict=UNRESOLVED, warnings=[
            *c.warnings, "on some seed neither side reached the target: no verdict"])
    missed = sum(not math.isfinite(t) for x in vals for t in x)
    if missed:
        c.warnings.append(f"{missed} run(s) never reached the target (read as infinitely slow)")
    return c


def ablate(prepared: Prepared, *, seeds: Sequence[int] = tuple(range(MIN_SEEDS)), fixes: Iterable[str] = FIXES,
           config: SpeedConfig | None = None, device: torch.device | str | None = None,
           target: float | None = None, progress: bool = True, warmup: bool = True) -> Ablation:
    """Run every arm of :func:`ablation_arms` once per seed, arms in a random order per seed.

    Args:
        prepared: from :func:`~course_utils.speedrun.prepare`.
        seeds: the paired seeds (rounds); a verdict needs at least 6.
        fixes: the fixes to ablate (all ten by default).
        config: the device-dependent choices (:func:`~course_utils.fixes.fast_config` of the device when None).
        device: where to train.
        target: validation accuracy to reach (the profile's when None).
        progress: a progress bar over the runs.
        warmup: one untimed run of the naive script and of the full stack first (first-call costs).

    Returns:
        An :class:`Ablation`; its :meth:`~Ablation.rows` and :meth:`~Ablation.headline` are the verdicts.
    """
    from .speedrun import run_once

    seeds, arms = list(seeds), ablation_arms(fixes)
    target = target if target is not None else prepared.sizes.target
    if warmup:
        for stack in (Stack.naive(), Stack.full()):
            run_once(stack, prepared, seed=10_000, config=config, device=device, target=target)
    times: dict[str, list[float | None]] = {a: [] for a in arms}
    runs: dict[str, list[dict[str, Any]]] = {a: [] for a in arms}
    orders = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(seeds) * len(arms), desc="ablation", unit="run")
    try:
        for seed in seeds:
            order = list(arms)
            random.Random(seed).shuffle(order)
            orders.append(order)
            for arm in order:
                r: RunResult = run_once(arms[arm], prepared, seed=seed, config=config, device=device, target=target)
                times[arm].append(r.time_to_target)
                runs[arm].append({k: v for k, v in r.to_dict().items() if k != "log"})
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return Ablation(target=target, seeds=seeds, fixes=list(dict.fromkeys(fixes)), times=times, orders=orders,
                    runs=runs)

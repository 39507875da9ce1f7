"""The capstone's ablation, run: each fix alone and removed, every arm once per seed, with A/A copies.

Every seed is one round: every arm runs once on that seed (the same initial weights and batch
order for all of them), in a random order drawn per seed. The naive script and the full stack
each run twice per seed, so every comparison has its A/A control (:func:`ablation_arms`).
:func:`ablate` runs the table; :func:`confirm_removed` reruns one of its rows on fresh seeds. What
the runs show, row by row, is :class:`~course_utils.capstone.ablation_table.Ablation`'s to say.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..measure.comparison import Comparison
from ..progress import progress_bar
from .ablation_table import FULL, FULL_COPY, NAIVE, NAIVE_COPY, Ablation, compare_times, seeds_needed
from .fixes import FIXES, Stack

if TYPE_CHECKING:
    import torch

    from .fixes import SpeedConfig
    from .speedrun import Prepared, RunResult

__all__ = ["ablate", "ablation_arms", "confirm_removed"]


def ablation_arms(fixes: Iterable[str] = FIXES) -> dict[str, Stack]:
    """The arms: naive and full stack (each twice), naive + each fix, full stack − each fix."""
    fixes = list(fixes)
    Stack.naive(fixes)  # the same check and message for a misspelt name
    arms = {NAIVE: Stack.naive(), NAIVE_COPY: Stack.naive(), FULL: Stack.full(), FULL_COPY: Stack.full()}
    for fix in fixes:
        arms[Stack.naive([fix]).name] = Stack.naive([fix])
        arms[Stack.full([fix]).name] = Stack.full([fix])
    return arms


def ablate(prepared: Prepared, *, seeds: Sequence[int] | None = None, fixes: Iterable[str] = FIXES,
           config: SpeedConfig | None = None, device: torch.device | str | None = None,
           target: float | None = None, progress: bool = True, warmup: bool = True) -> Ablation:
    """Run every arm of :func:`ablation_arms` once per seed, arms in a random order per seed.

    Args:
        prepared: from :func:`~course_utils.capstone.speedrun.prepare`.
        seeds: the paired seeds (rounds); by default :func:`seeds_needed` of ``fixes``, the fewest
            for which every row of the table can earn a verdict (7 for one fix, 10 for ten).
        fixes: the fixes to ablate (all ten by default).
        config: the device-dependent choices (:func:`~course_utils.capstone.fixes.fast_config` of the device when None).
        device: where to train.
        target: validation accuracy to reach (the profile's when None).
        progress: a progress bar over the runs.
        warmup: one untimed run of the naive script and of the full stack first (first-call costs).

    Returns:
        An :class:`~course_utils.capstone.ablation_table.Ablation`; its ``rows()`` and ``headline()`` are the verdicts.
    """
    from ..env import check_device
    from .fixes import DeviceInfo, fast_config, no_ops_here
    from .speedrun import run_once

    fixes = list(fixes)
    device = check_device(device)
    config = config or fast_config(DeviceInfo.here(device))
    seeds, arms = list(seeds if seeds is not None else range(seeds_needed(fixes))), ablation_arms(fixes)
    target = target if target is not None else prepared.sizes.target
    if warmup:
        for stack in (Stack.naive(), Stack.full()):
            run_once(stack, prepared, seed=10_000, config=config, device=device, target=target)
    times: dict[str, list[float | None]] = {a: [] for a in arms}
    runs: dict[str, list[dict[str, Any]]] = {a: [] for a in arms}
    orders = []
    bar = progress_bar(len(seeds) * len(arms), "ablation", unit="run") if progress else None
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
    fixes = list(dict.fromkeys(fixes))
    return Ablation(target=target, seeds=seeds, fixes=fixes, times=times, orders=orders, runs=runs,
                    no_ops=no_ops_here(config, device, fixes))


def confirm_removed(prepared: Prepared, fix: str, *, seeds: Sequence[int] = range(100, 106),
                    config: SpeedConfig | None = None, device: torch.device | str | None = None,
                    target: float | None = None, progress: bool = True) -> Comparison:
    """One removed row again, on fresh seeds, as one comparison at 95 % decided before it runs.

    A table of many rows is a search: a row it calls "slower" (the stack got there sooner without
    ``fix``) may be its one chance verdict. This reruns that row only (full stack twice, for the
    A/A control, and full stack − ``fix``, in a random order per seed) on seeds the table did not
    use, and compares them like ``Ablation.compare`` (speed-up of having ``fix``; < 1: it harms).
    """
    from .speedrun import run_once

    Stack.full([fix])  # the same check and message for a misspelt name
    arms = {FULL: Stack.full(), FULL_COPY: Stack.full(), Stack.full([fix]).name: Stack.full([fix])}
    times: dict[str, list[float | None]] = {a: [] for a in arms}
    bar = progress_bar(len(seeds) * len(arms), f"confirm {fix} removed", unit="run") if progress else None
    try:
        for seed in seeds:
            order = list(arms)
            random.Random(seed).shuffle(order)
            for arm in order:
                r = run_once(arms[arm], prepared, seed=seed, config=config, device=device, target=target)
                times[arm].append(r.time_to_target)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    trick = Stack.full([fix]).name
    c = compare_times(times[FULL], times[FULL_COPY], times[trick], names=(trick, FULL), removed=True)
    c.method = (f"fresh seeds as rounds (full stack twice, for the A/A control, and full stack − {fix}, once per "
                "seed on the same weights and batches, in a random order per seed)")
    return c

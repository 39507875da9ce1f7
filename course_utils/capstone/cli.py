"""The speed-run on the command line: ``python -m course_utils.capstone.cli`` (``make speedrun ARGS="..."``).

Trains the course's stacked script (or the naive one, or the stack less some fixes) to a target
validation accuracy on a few seeds, after one untimed warm-up run, prints each seed and the
median, and saves the result. A seed that never reached the target counts as infinitely slow:
the median is "not reached" when at least half the seeds missed, and the saved result says how
many reached it (k/n). Ctrl-C saves the seeds that finished, marked ``"partial": true``.

This module is not imported by ``course_utils``'s ``__init__``, so ``python -m`` runs it without
runpy's "found in sys.modules" warning.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import Any

from . import speedrun as sr
from .fixes import FIXES, Stack

PROG = "python -m course_utils.capstone.cli"


def _epilog() -> str:
    width = max(map(len, FIXES))
    fixes = "\n".join(f"  {k:<{width}}  {v}" for k, v in FIXES.items())
    return f"""the fixes (all on in the stack; --without FIX takes one out, --naive takes all out):
{fixes}

what is timed: each run from its start (model, data decoding, worker start-up and every
validation evaluation included) to the first evaluation that reaches the target; the test set
is evaluated once, after the stop, and printed against the target. One untimed warm-up run
comes first (thread pools, kernel selection). A seed that never reaches the target within the
profile's budget counts as infinitely slow. On a CPU torch runs on --threads threads (1, as in
lesson 19, unless set).

results: saved as JSON under $COURSE_RESULTS_DIR (default: results/ of the course checkout), in
<machine>/speedrun_cli.<profile>.json, with every run; an interrupted run (Ctrl-C) saves
the seeds that finished, marked "partial": true. The profile (sizes, budget, target) is
$COURSE_PROFILE's (smoke, cpu or gpu).

through make: make speedrun ARGS="--naive --seeds 6"; make speedrun ARGS=--help shows this
help (make speedrun --help shows make's own)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_epilog(),
        description="Time the course's stacked speed-run script (or the naive one) to a target validation\n"
                    "accuracy, one run per seed, after an untimed warm-up run.")
    p.add_argument("--naive", action="store_true", help="run the naive script (no fix) instead of the stack")
    p.add_argument("--without", action="append", default=[], choices=list(FIXES), metavar="FIX",
                   help="leave this fix out of the stack (repeatable; one of the fixes listed below)")
    p.add_argument("--seeds", type=int, default=1, help="seeds to run, 0 .. N-1 (default 1)")
    p.add_argument("--target", type=float, default=None,
                   help="target validation accuracy in (0, 1), e.g. 0.62 (default: the profile's)")
    p.add_argument("--dataset", default="fashionmnist", help="fashionmnist (default), digits or cifar10")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads on a CPU (default 1, as lesson 19; GPU runs leave torch's default)")
    return p


def median_time(times: list[float | None]) -> float:
    """The median time to target, a seed that never reached it counting as infinitely slow (inf: not reached)."""
    return statistics.median(math.inf if t is None else t for t in times)


def headline_text(name: str, target: float, times: list[float | None]) -> str:
    """The median line, built from the per-seed times (None: never reached)."""
    k, n = sum(t is not None for t in times), len(times)
    med = median_time(times)
    reached = sorted(t for t in times if t is not None)
    counted = f"{k} of {n} seed(s) reached it; a seed that never did counts as infinitely slow"
    if math.isinf(med):
        return f"{name}: time to {target:.0%} validation accuracy: median not reached ({counted})"
    rng = f"{reached[0]:.2f}–{reached[-1]:.2f} s" if k == n else f"{reached[0]:.2f} s to never"
    return (f"{name}: time to {target:.0%} validation accuracy, median {med:.2f} s over all {n} seed(s) "
            f"({counted}; range {rng}: a range, not an interval)")


def _save(env: Any, stack: Stack, dataset: str, target: float, runs: list[sr.RunResult], *, partial: bool,
          seeds: int) -> Any:
    from ..results.labels import Effect
    from ..results.store import save

    times = [r.time_to_target for r in runs]
    med = median_time(times) if runs else math.inf
    k, n = sum(t is not None for t in times), len(times)
    reached = sorted(t for t in times if t is not None)
    headline = Effect(f"median time to {target:.0%}, {stack.name} ({k}/{n} seeds reached it; never counts as "
                      "infinitely slow)", med if math.isfinite(med) else float("nan"),
                      low=reached[0] if reached else None, high=reached[-1] if k == n and reached else None,
                      unit="s", interval=f"min-max over {n} seed(s)", metric="time to target")
    return save("speedrun_cli", env, headline="time_to_target", time_to_target=headline,
                reached=f"{k}/{n}", partial=partial, seeds_asked=seeds,
                runs=[r.to_dict() for r in runs], stack=sorted(stack.fixes), dataset=dataset, target=target)


def main(argv: list[str] | None = None) -> int:
    """The command line: run every seed, print, and save (the finished seeds only, as partial, on Ctrl-C).

    Returns:
        The exit code: 0, 2 for bad arguments (argparse's), 130 when interrupted.
    """
    p = _parser()
    args = p.parse_args(argv)
    if args.naive and args.without:
        p.error("--naive runs no fix at all; --without only applies to the stack")
    if args.seeds < 1:
        p.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.target is not None and not 0.0 < args.target < 1.0:
        hint = f" (did you mean {args.target / 100:g}?)" if 1.0 < args.target < 100.0 else ""
        p.error(f"--target is an accuracy in (0, 1), got {args.target}{hint}")
    if args.threads is not None and args.threads < 1:
        p.error(f"--threads must be at least 1, got {args.threads}")
    from ..data.datasets import DATASETS
    from ..env import setup
    from ..progress import progress_bar

    if args.dataset not in DATASETS:
        p.error(f"--dataset must be one of {', '.join(DATASETS)}, got {args.dataset!r}")
    env = setup()
    if env.device.type == "cpu":
        env.set_threads(args.threads or 1)
    elif args.threads is not None:
        env.set_threads(args.threads)
    stack = Stack.naive() if args.naive else Stack.full(args.without)
    runs: list[sr.RunResult] = []
    prepared = target = None
    try:
        prepared = sr.prepare(args.dataset, env.profile)
        target = args.target if args.target is not None else prepared.sizes.target
        print("warm-up run (untimed: first-call costs such as thread pools and kernel selection)")
        sr.run_once(stack, prepared, seed=10_000, device=env.device, target=target)
        with progress_bar(args.seeds, stack.name, unit="seed") as bar:
            for seed in range(args.seeds):
                r = sr.run_once(stack, prepared, seed=seed, device=env.device, target=target,
                                progress=args.seeds == 1)
                runs.append(r)
                got = "never" if r.time_to_target is None else f"{r.time_to_target:.2f} s"
                bar.write(f"seed {seed}: time to {target:.0%} {got} after {r.steps} steps; validation "
                          f"{r.val_accuracy:.1%}, {r.test_against_target()}")
                bar.update(1)
    except KeyboardInterrupt:
        if not runs:
            print(f"interrupted before the first of {args.seeds} seed(s) finished: nothing to save", file=sys.stderr)
            return 130
        path = _save(env, stack, prepared.data.name, target, runs, partial=True, seeds=args.seeds)
        print(headline_text(stack.name, target, [r.time_to_target for r in runs]))
        print(f"interrupted after {len(runs)} of {args.seeds} seed(s): the {len(runs)} finished saved, marked "
              f"\"partial\": true, in {path}", file=sys.stderr)
        return 130
    print(headline_text(stack.name, target, [r.time_to_target for r in runs]))
    _save(env, stack, prepared.data.name, target, runs, partial=False, seeds=args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How well does cu.compare resolve effects on this machine? (a benchmark, not a test)

Prints the A/A interval width with 1 and 2 threads, and the smallest extra work that
cu.compare resolves within a fixed time budget of rounds. Run: `.venv/bin/python tools/bench_compare.py`.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import course_utils as cu  # noqa: E402

UNIT = torch.randn(96, 96)


def work(units: int) -> None:
    """``units`` small matmuls: the knob that sets the true time ratio."""
    for _ in range(units):
        torch.mm(UNIT, UNIT)


def main() -> None:
    """Print the A/A widths and the resolution sweep."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of rounds per comparison")
    parser.add_argument("--repeats", type=int, default=3, help="A/A runs per thread count")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts of the A/A runs")
    args = parser.parse_args()
    base = 100  # so that 1 % of extra work is one whole matmul
    for threads in args.threads:
        widths = []
        for seed in range(args.repeats):
            c = cu.compare(lambda: work(base), lambda: work(base), budget=args.budget,
                           num_threads=threads, seed=seed, progress=False)
            widths.append(c.ci[1] - c.ci[0])
            print(f"A/A {threads} thread(s): {c.speedup:.3f}× [{c.ci[0]:.3f}, {c.ci[1]:.3f}] "
                  f"width {c.ci[1] - c.ci[0]:.3f}, CV {c.cv[0]:.1%}, {c.rounds} rounds -> {c.verdict}")
        print(f"  median A/A width with {threads} thread(s): {sorted(widths)[len(widths) // 2]:.3f}")
    for extra in (1, 2, 3, 5, 10, 20):  # percent of extra work in the trick arm
        units = base + base * extra // 100
        c = cu.compare(lambda: work(base), functools.partial(work, units), budget=args.budget,
                       num_threads=1, progress=False)
        print(f"+{extra:>2} % work, 1 thread: time ratio {c.time_ratio:.3f}, speed-up CI "
              f"[{c.ci[0]:.3f}, {c.ci[1]:.3f}], {c.rounds} rounds -> {c.verdict}")


if __name__ == "__main__":
    main()

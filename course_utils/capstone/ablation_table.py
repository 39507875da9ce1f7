"""The capstone's ablation as a table: :class:`Ablation` (each fix alone and removed), its rows and verdicts.

:func:`~course_utils.capstone.ablation.ablate` runs every arm once per seed, seeds as rounds,
with A/A copies of the naive script and the full stack. A comparison reads the
per-seed times to target through the engine's :func:`~course_utils.measure.analysis.analyze` (per seed
the baseline's time over the arm's, a distribution-free interval for the median, the control's
interval), so its verdict and error rates are the engine's, with seeds for rounds.

The rows (each fix alone and removed) are one table: each row's interval is at the level that
keeps the chance of *any* false row at most 5 % (:func:`~course_utils.measure.stats.family_level`), so
the seeds a table needs follow from its rows (:func:`seeds_needed`: 7 for one fix, 10 for ten).
The headline (full stack against naive) is one comparison at 95 %. A row that the table calls
"slower" is a lead, not a finding: :func:`~course_utils.capstone.ablation.confirm_removed`
reruns that one comparison on fresh seeds, decided in advance, at 95 %.

A fix that is a no-op on this device with this config (:func:`~course_utils.capstone.fixes.no_op_here`:
``big_batch`` on a CPU, ``amp`` without a faster dtype, ``workers`` with 0 workers) runs the same
computation as its baseline: its rows are one more A/A check (:attr:`Ablation.no_ops`).

A run that never reached the target is infinitely slow on its side only; a seed on which both
sides of a ratio missed says nothing about which is faster and is left out of that comparison.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..measure import forcing
from ..measure.analysis import analyze, medians_warning, range_only
from ..measure.comparison import Comparison
from ..measure.formatting import format_level
from ..measure.stats import SLOWER, family_level, min_rounds, verdict_kind
from .fixes import FIXES, Stack

__all__ = ["Ablation", "SEED_METHOD", "TABLE_LEVEL", "compare_times", "seeds_needed"]

#: The chance that every row of an ablation's table is right together (all intervals hold).
TABLE_LEVEL = 0.95

NAIVE, FULL = Stack.naive().name, Stack.full().name
#: The A/A copies' names.
NAIVE_COPY, FULL_COPY = f"{NAIVE} (A/A copy)", f"{FULL} (A/A copy)"
#: How an ablation comparison was measured (printed with it).
SEED_METHOD = ("seeds as rounds (every arm once per seed on the same weights and batches, arms in a random "
               "order per seed; naive script and full stack twice, for the A/A control)")


def seeds_needed(fixes: Iterable[str] = FIXES, level: float = TABLE_LEVEL) -> int:
    """The fewest seeds for which every row of the table (each fix alone and removed) can earn a verdict."""
    return min_rounds(family_level(level, 2 * len(list(fixes))))


@dataclass
class Ablation:
    """Times to target per arm and seed (None: the budget ran out first), and the orders run."""

    target: float
    seeds: list[int]
    fixes: list[str]
    times: dict[str, list[float | None]]
    orders: list[list[str]] = field(default_factory=list)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: fix -> why it changes nothing on this device with this config (its rows are A/A checks)
    no_ops: dict[str, str] = field(default_factory=dict)

    def compare(self, baseline: str, trick: str, *, removed: bool = False, level: float = 0.95,
                family: tuple[int, float | None] = (1, None)) -> Comparison:
        """``baseline`` (naive or full stack, with its A/A copy) against the arm ``trick``, seed by seed.

        The speed-up is baseline time / trick time (> 1: the trick reached the target sooner).
        ``removed``: read the other way round, as the speed-up of having what ``trick`` lacks
        (``trick`` time / ``baseline`` time, named "trick vs baseline"). ``level`` and ``family``
        as in :func:`~course_utils.measure.analysis.analyze`.
        """
        copy = {NAIVE: NAIVE_COPY, FULL: FULL_COPY}.get(baseline)
        if copy is None:
            raise ValueError(f"the baseline is {NAIVE!r} or {FULL!r} (they have A/A copies), got {baseline!r}")
        if trick not in self.times:
            raise ValueError(f"no arm {trick!r}; the arms are {', '.join(self.times)}")
        return compare_times(self.times[baseline], self.times[copy], self.times[trick],
                             names=(trick, baseline) if removed else (baseline, trick), removed=removed,
                             level=level, family=family)

    @property
    def row_level(self) -> float:
        """Each row's level: all rows of the table hold together with :data:`TABLE_LEVEL`."""
        return family_level(TABLE_LEVEL, 2 * len(self.fixes))

    def rows(self) -> list[tuple[str, str, Comparison]]:
        """Every fix twice: ("alone", fix, naive vs naive + fix) and ("removed", fix, full − fix vs full).

        A removed row reads like an alone row: its speed-up > 1 when the fix helps (full stack's
        time without the fix over its time with it, as a speed-up of having it). All rows are one
        table, at :attr:`row_level` each.
        """
        out, family = [], (2 * len(self.fixes), TABLE_LEVEL)
        for fix in self.fixes:
            out.append(("alone", fix, self.compare(NAIVE, Stack.naive([fix]).name, level=self.row_level,
                                                   family=family)))
            out.append(("removed", fix, self.compare(FULL, Stack.full([fix]).name, removed=True,
                                                     level=self.row_level, family=family)))
        return out

    def to_confirm(self) -> list[str]:
        """The fixes whose removed row says "slower" (the stack got there sooner without them), no-ops left out.

        Each is a lead from a table of many rows, to rerun on fresh seeds with
        :func:`~course_utils.capstone.ablation.confirm_removed` before calling the fix harmful.
        """
        return [fix for kind, fix, c in self.rows()
                if kind == "removed" and fix not in self.no_ops and verdict_kind(c.verdict) == SLOWER]

    def headline(self) -> Comparison:
        """The full stack against the naive script: the stacked speed-up in time to target (95 %)."""
        return self.compare(NAIVE, FULL)

    def expected_false(self) -> float:
        """At most this many chance verdicts are expected in the table (rows × each row's error rate)."""
        return 2 * len(self.fixes) * (1 - self.row_level)

    def table_note(self) -> str:
        """What the table's verdicts promise together, in words."""
        m = 2 * len(self.fixes)
        return (f"{m} rows, each interval at {format_level(self.row_level)}: at most a "
                f"{format_level(1 - TABLE_LEVEL)} chance that any row's verdict is false (for independent seeds), "
                f"so at most {self.expected_false():.2g} chance verdicts expected in the whole table "
                f"({m * 0.05:.2g} if each row were at 95 %); {len(self.seeds)} seeds, {seeds_needed(self.fixes)} "
                "needed for a row to earn a verdict")

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
                "headline": self.headline().to_dict(), "no_ops": self.no_ops,
                "rows": [{"kind": k, "fix": f, "no_op": f in self.no_ops, **c.to_dict()} for k, f, c in self.rows()]}

    def __str__(self) -> str:
        lines = [f"time to {self.target:.0%} validation accuracy over {len(self.seeds)} seeds ({SEED_METHOD})",
                 f"{'':<9}{'fix':<21}{'speed-up':>9}  interval            verdict"]
        for kind, fix, c in [("stack", "all ten", self.headline()), *self.rows()]:
            note = "  (no-op here: an extra A/A check)" if fix in self.no_ops else ""
            lines.append(f"{kind:<9}{fix:<21}{c.speedup:>8.2f}×  [{c.ci[0]:.2f}, {c.ci[1]:.2f}]"
                         f"{'':<8}{c.verdict}{note}")
        lines.append(f"the stack row at 95 %; the {self.table_note()}")
        for fix, why in self.no_ops.items():
            lines.append(f"no-op here: {fix}: {why}")
        return "\n".join(lines)


def compare_times(baseline: Sequence[float | None], control: Sequence[float | None], trick: Sequence[float | None],
                  *, names: tuple[str, str], removed: bool = False, level: float = 0.95,
                  family: tuple[int, float | None] = (1, None)) -> Comparison:
    """The engine's comparison of per-seed times to target (None: never reached, infinitely slow).

    Per seed the ratio is baseline / trick (``removed``: trick / baseline, the speed-up of having
    what the trick lacks; ``names`` then name the trick first). A seed on which both missed is
    left out, with a warning; fewer seeds than an interval at ``level`` needs give no verdict
    ("not resolvable with N seeds").
    """
    import numpy as np

    n = len(baseline)
    if not n == len(control) == len(trick):
        raise ValueError(f"every arm needs one time per seed, got {n}, {len(control)}, {len(trick)}")
    a, a2, b = (np.asarray([math.inf if t is None else t for t in x], dtype=float) for x in (baseline, control, trick))
    keep = ~(np.isinf(a) & np.isinf(b))
    a, a2, b = a[keep], a2[keep], b[keep]
    ratios = b / a if removed else None
    notes = []
    if not keep.all():
        notes.append(f"{int((~keep).sum())} seed(s) on which neither side reached the target left out "
                     f"({int(keep.sum())} of {n} remain)")
    missed = int(np.isinf(a).sum() + np.isinf(a2).sum() + np.isinf(b).sum())
    if missed:
        notes.append(f"{missed} run(s) in the remaining seeds never reached the target (infinitely slow on their side)")
    word = f"seed{'s' if keep.sum() != 1 else ''}"
    if keep.sum() < min_rounds(level):
        c = range_only(a, a2, b, names=names, rounds_word=word, level=level, method=SEED_METHOD, ratios=ratios)
    else:
        c = analyze(a, a2, b, names=names, level=level, rounds_word=word, family=family, ratios=ratios,
                    more="Run more seeds for a narrower interval.")
    if removed:  # the names run trick first: so do the per-arm figures (and the warning that reads them)
        c = dataclasses.replace(c, median_s=c.median_s[::-1], cv=c.cv[::-1])
        c.warnings = [w for w in c.warnings if w not in medians_warning(dataclasses.replace(
            c, median_s=c.median_s[::-1]))] + medians_warning(c)
    c.method = SEED_METHOD
    c.warnings += notes
    return forcing.apply(c)  # a test run's forced verdict (smoke profile only); c otherwise


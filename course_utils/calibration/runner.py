"""The engine's error rates on the real clock: many real A/A comparisons, their false verdicts counted.

``make calibrate`` (``python -m course_utils.calibration``) or ``cu.calibration.calibrate()`` compares real
workloads (:mod:`course_utils.calibration.workloads`) with themselves, the same function as baseline
and as trick, and counts how often identical arms were called "faster" or "slower". The label is
at most 5 % false verdicts (2.5 % a side); each rate comes with its exact binomial (Clopper–Pearson)
95 % interval, and a workload whose interval lies above the label is flagged. Two pairs that leave
work behind test what the A/A control cannot see (carry-over), read with the engine's carry-over
diagnostic. The result is saved like a lesson's, as ``results/<machine-id>/calibration.<profile>.json``;
:func:`load_calibration` reads the latest back.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .records import Trial, WorkloadResult, _num, _pct
from .workloads import CHILD, WORKLOADS, Workload

__all__ = ["Calibration", "Trial", "WorkloadResult", "calibrate", "load_calibration", "main"]

SLUG = "calibration"


@dataclass
class Calibration:
    """A calibration (:func:`calibrate`): per workload, the verdicts of real comparisons. Prints as a table."""

    machine: str
    profile: str
    device: str
    num_threads: int
    wall_s: float
    workloads: list[WorkloadResult]
    saved_at: str = ""

    @property
    def null(self) -> list[WorkloadResult]:
        """The A/A workloads (identical arms, not built to leave work behind): the label's rates."""
        return [w for w in self.workloads if w.true_speedup == 1.0 and not w.carry]

    def total(self, verdict: str) -> tuple[int, int]:
        """(count, comparisons) of ``verdict`` over the A/A workloads; ``"false"``: faster + slower."""
        k = sum((w.false or 0) if verdict == "false" else w.count(verdict) for w in self.null)
        return k, sum(w.n for w in self.null)

    def lines(self) -> list[str]:
        """The printed table, line by line."""
        rows = [("workload", "n", "false verdicts [95 % interval]", "faster/slower", "control failed (reruns)",
                 "skew of log t: A+A′ / in round", "median rounds", "ratios > 1")]
        for w in self.null:
            rows.append((w.name + (" (!)" if w.flags else ""), str(w.n), _pct(w.false or 0, w.n),
                         f"{w.count('faster')}/{w.count('slower')}",
                         f"{w.count('control failed') / w.n:.1%} ({sum(t.rerun for t in w.trials)} reran)",
                         " / ".join("–" if math.isnan(x) else f"{x:+.2f}" for x in w.skewness),
                         f"{w.median_rounds:g}", f"{w.above_one:.3f}"))
        (k, n), (kf, _), (ks, _) = self.total("false"), self.total("faster"), self.total("slower")
        if n:
            reran = sum(t.rerun for w in self.null for t in w.trials)
            rows.append(("all A/A", str(n), _pct(k, n), f"{kf}/{ks}",
                         f"{self.total('control failed')[0] / n:.1%} ({reran} reran)", "", "", ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        return [f"Calibration on {self.machine} ({self.device}, {self.num_threads} thread(s), profile "
                f"{self.profile}): real A/A comparisons, {self.wall_s / 60:.1f} min in all",
                *("  ".join(c.ljust(wd) for c, wd in zip(r, widths)).rstrip() for r in rows),
                "label: at most 5 % false verdicts (\"faster\" or \"slower\" for identical arms), 2.5 % a side; "
                "intervals: exact binomial (Clopper–Pearson) 95 %; (!): an interval's lower end above the label",
                "budget per comparison: " + ", ".join(f"{w.name} {w.budget:g} s" if w.budget else f"{w.name} 6 rounds"
                                                      for w in self.workloads),
                "skew of log seconds per call (A+A′ pooled over rounds / within rounds, each round's mean taken "
                "out): " + "; ".join(f"{', '.join(w.name for w in self.null if w.blocks_from == src)} from {src}"
                                     for src in dict.fromkeys(w.blocks_from for w in self.null if w.blocks_from)),
                *(f"flagged: {w.name}: {', '.join(w.flags)}" for w in self.workloads if w.flags),
                *(w.carry_line() for w in self.workloads if w not in self.null)]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the calibration as a JSON-serialisable dict (``kind`` = ``"calibration"``; NaN as None)."""
        def clean(x: Any) -> Any:
            if isinstance(x, float):
                return x if math.isfinite(x) else None
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            return [clean(v) for v in x] if isinstance(x, (list, tuple)) else x
        return {"kind": "calibration", **clean(dataclasses.asdict(self))}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        """Rebuild a calibration saved with :meth:`to_dict`."""
        def trial(t: dict[str, Any]) -> Trial:
            pairs = {k: tuple(map(_num, t[k])) for k in ("median_s", "carry_over_ci")}
            return Trial(**{**t, **pairs, "speedup": _num(t["speedup"]), "carry_over": _num(t["carry_over"]),
                            "ratios": [_num(x) for x in t["ratios"]]})
        loads = [WorkloadResult(**{**w, "trials": [trial(t) for t in w["trials"]], "wall_s": _num(w["wall_s"])})
                 for w in d["workloads"]]
        kw = {k: d[k] for k in cls.__dataclass_fields__ if k in d and k != "workloads"}
        return cls(**{**kw, "wall_s": _num(kw.get("wall_s"))}, workloads=loads)


def _split(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` comparisons shared by ``weights`` (largest remainders), at least one each."""
    raw = [total * w / sum(weights) for w in weights]
    counts = [max(1, math.floor(r)) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: math.floor(raw[i]) - raw[i])[:max(0, total - sum(counts))]:
        counts[i] += 1
    return counts


def _run(w: Workload, n: int, device: torch.device, bar: Any, seed: int) -> WorkloadResult:
    """``n`` comparisons of one workload (and its block times), advancing ``bar`` after each."""
    from ..measure.compare import compare
    from ..measure.processes import CONTROL, in_processes
    from ..measure.stats import min_rounds
    from ..measure.sweep import sweep

    start, trials, blocks, blocks_from = time.perf_counter(), [], [], ""
    bar.set_description(f"calibrate: {w.name}")
    if w.arms is None:  # rounds of fresh processes: 6 rounds a comparison, 5 comparisons per fork server
        per = min_rounds()
        for first in range(0, n, 5):
            runs = in_processes(CHILD, {"process": {}, "same process": {}}, rounds=per * min(5, n - first),
                                progress=False, preload=("torch",))
            arms = [runs.baseline, CONTROL, *(a for a in runs.results if a not in (runs.baseline, CONTROL))]
            blocks += [[runs.results[a][r]["steady_s"] for a in arms] for r in range(runs.rounds)]
            for i in range(0, runs.rounds, per):
                part = dataclasses.replace(runs, results={a: v[i:i + per] for a, v in runs.results.items()},
                                           wall_s={a: v[i:i + per] for a, v in runs.wall_s.items()},
                                           order=runs.order[i:i + per])
                trials.append(Trial.of(part.compare("steady_s", "same process")))
                bar.update(1)
        blocks_from = "the comparisons' own processes (steady_s of every arm)"
    else:
        dev = torch.device("cpu") if w.cpu_only else device
        with w.arms(dev) as (baseline, trick):
            for i in range(n):
                trials.append(Trial.of(compare(baseline, trick, names=("baseline", "trick"), budget=w.budget,
                                               device=dev, seed=seed + i, progress=False)))
                bar.update(1)
            if w.sweep_rounds:
                s = sweep({"A": baseline, "B": baseline}, rounds=w.sweep_rounds, warmup=2, device=dev, seed=seed,
                          progress=False)
                arms = ["A", "A/A control", *(a for a in s.times if a not in ("A", "A/A control"))]
                blocks = [list(r) for r in zip(*(s.times[a] for a in arms))]
                blocks_from = f"a cu.sweep of the baseline against itself, {len(blocks)} rounds (all its arms)"
    return WorkloadResult(w.name, w.description, w.true_speedup, w.carry, w.budget, trials, blocks, blocks_from,
                          time.perf_counter() - start)


def calibrate(*, comparisons: int = 200, profile: str | None = None, progress: bool = True, save: bool = True,
              workloads: Sequence[str | Workload] | None = None) -> Calibration:
    """Run real A/A comparisons of real workloads and count their false verdicts (about 6 min on 2 CPU cores).

    Each comparison is ``cu.compare(f, f)`` (a carry-over pair: ``cu.compare(baseline, trick)``) at the
    engine's defaults but for three settings. The budget: 1.5 s for the µs to ms workloads, which
    still gives about 18 rounds (the profiles' 8 s on a CPU and 2 s on a GPU would make 200
    comparisons take half an hour); 1 s for DataLoader epochs, about 0.1 s a call, so they run the
    6 rounds every comparison runs at least; 6 s for the epoch-vs-sum pair, whose carry-over
    diagnostic needs 8 rounds in which one baseline copy follows the epoch and the other does not.
    The seed of the arm orders, ``seed + i``, so that the comparisons are independent draws of the
    engine's own randomisation. One torch thread, pinned for the whole run as every lesson pins it on
    a CPU. The process workload is ``ProcessRuns.compare`` over 6 rounds of ``cu.in_processes`` (its
    default), the rounds of 5 comparisons run by one fork server, which holds nothing but imports.
    Skewness of log block times comes from a ``cu.sweep`` of the baseline against itself, which keeps
    every block's time (a ``Comparison`` keeps only ratios), and for processes from the comparisons'
    own runs.

    Args:
        comparisons: comparisons in all, shared by the workloads' weights (at least one each).
        profile: the profile the result is saved under; the run profile by default.
        progress: one progress bar over all comparisons.
        save: save under ``results/<machine-id>/calibration.<profile>.json`` with the environment record.
        workloads: names in :data:`~course_utils.calibration.workloads.WORKLOADS`, or :class:`Workload`
            objects; all of them by default.

    Returns:
        The :class:`Calibration` (print it for the table).

    Raises:
        ValueError: fewer than one comparison, an unknown workload or profile.
    """
    from ..env import PROFILES, Env, choose_device, environment_record, get_profile
    from ..hardware import machine_id
    from ..measure.clock import threads
    from ..progress import progress_bar
    from ..results.labels import Effect
    from ..results.store import save as save_result

    if comparisons < 1:
        raise ValueError(f"comparisons must be at least 1, got {comparisons}")
    unknown = [w for w in workloads or () if isinstance(w, str) and w not in WORKLOADS]
    if unknown:
        raise ValueError(f"unknown workloads {unknown}; the workloads are {list(WORKLOADS)}")
    chosen = [WORKLOADS[w] if isinstance(w, str) else w for w in (workloads or list(WORKLOADS))]
    device = choose_device()
    profile = profile or get_profile(device)
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    start, counts = time.perf_counter(), _split(comparisons, [w.weight for w in chosen])
    with threads(1), progress_bar(sum(counts), "calibrate", unit="comparison", disable=not progress) as bar:
        env = Env(device, profile, 0, {**environment_record(device), "profile": profile})
        results = [_run(w, n, device, bar, 1000 * i) for i, (w, n) in enumerate(zip(chosen, counts))]
    cal = Calibration(machine_id(env.record), profile, device.type, 1, time.perf_counter() - start, results)
    k, n = cal.total("false")
    if save and n:
        from ..measure.rates import binomial_ci

        lo, hi = binomial_ci(k, n)
        headline = Effect(f"false verdicts of {n} real A/A comparisons (label: at most 5 %)", 100 * k / n,
                          100 * lo, 100 * hi, unit=" %", metric="A/A false verdicts",
                          interval="exact binomial (Clopper–Pearson) 95 % interval")
        save_result(SLUG, env, headline="false_verdicts", false_verdicts=headline, calibration=cal)
    return cal


def load_calibration(root: str | Path | None = None) -> Calibration | None:
    """Return this machine's latest saved calibration (any profile), or None when it has none.

    ``root`` is the results folder (:func:`~course_utils.results.store.results_dir` by default).
    """
    from ..env import choose_device, environment_record
    from ..hardware import machine_id
    from ..results.store import load_result, results_dir

    folder = (Path(root) if root is not None else results_dir()) / machine_id(environment_record(choose_device()))
    found = [d for p in sorted(folder.glob(f"{SLUG}.*.json")) if (d := load_result(p)) and d["notebook"] == SLUG]
    if not found:
        return None
    latest = max(found, key=lambda d: d.get("saved_at") or "")
    cal = Calibration.from_dict(latest["measurements"]["calibration"])
    cal.saved_at = latest.get("saved_at") or ""
    return cal


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m course_utils.calibration [--comparisons N] [--profile P]``: run, print and save."""
    from ..env import PROFILES

    p = argparse.ArgumentParser(prog="python -m course_utils.calibration",
                                description=(calibrate.__doc__ or "").split("\n")[0])
    p.add_argument("--comparisons", type=int, default=200, metavar="N", help="comparisons in all (default 200)")
    p.add_argument("--profile", choices=PROFILES, help="the profile to save under (default: the run profile)")
    p.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), metavar="NAME",
                   help=f"some workloads only (default: all: {', '.join(WORKLOADS)})")
    args = p.parse_args(argv)
    cal = calibrate(comparisons=args.comparisons, profile=args.profile, workloads=args.workloads)
    print(cal)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

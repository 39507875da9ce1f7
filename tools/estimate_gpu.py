"""How long `make reference` takes on an H100/H200, lesson by lesson, without one at hand.

Three parts per lesson, each with its assumption printed:

- **Comparisons.** Every ``cu.compare`` / ``cu.sweep`` measurement the lesson runs, each at its
  gpu-profile budget (``BUDGETS["gpu"] × (arms + 1) / 3``, course_utils/measure/clock.py), or at the floor
  of the minimum rounds where the arms are too slow for the budget (``need`` rounds × every arm's
  block and untimed call). ``--measure`` counts the measurements by running each lesson in the smoke
  profile with ``course_utils.measure.engine.measure`` wrapped (loops and reruns included) and caches the
  counts in build/estimate/; without it the call sites are counted in the source (a call in a loop
  counts once: a lower bound).
- **Compute outside the comparisons**, from the lessons' own ``FlopCounterMode`` figures (each
  solution notebook's sizing comment, kept as its ``course.gpu`` metadata: tools/lesson_facts.py):
  FLOPs at an assumed sustained rate, or a launch-bound floor per optimizer step for small models,
  whichever is larger; plus the data path where a lesson has one (lesson 02 decodes images on the
  CPU: a 16-CPU box).
- **Processes, launches and compiles**, counted from the lesson's code at gpu sizes: fresh Python
  processes that import torch and create a CUDA context, children forked from a preloaded fork server
  (each still creates its own CUDA context and loads cuDNN/cuBLAS), ``torchrun`` launches (an agent and
  its ranks, each a fresh process, plus the rendezvous), and ``torch.compile`` compiles: cold (a fresh
  process with an empty inductor cache, the compile-worker pool started) or warm (in the kernel).
- **Fixed cost**: the runner, the kernel, imports and data loading, per lesson.

    python tools/estimate_gpu.py                 # the estimate (cached counts, else the source's call sites)
    python tools/estimate_gpu.py --measure       # count the measurements first (smoke runs, ~4 min on 2 CPUs)
    python tools/estimate_gpu.py --budget 8      # what another comparison budget would give

Exit status 1 when the total is over ``--target`` (default 9.5 min: a device window is about 15 minutes in
all, at most 10 a command). ``lesson_seconds()`` gives ``make reference`` each lesson's estimate, so that
a run with a ``--budget`` starts only lessons that can finish.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.run_notebooks import select_lessons  # noqa: E402

CACHE = ROOT / "build" / "estimate"
#: Assumptions (H100/H200 SXM, fp32 with TF32 off for matmuls as PyTorch defaults, 16 CPUs).
RATE_FLOPS = 40e12  # sustained fp32 FLOP/s on large matmuls/convs (peak ~67 TFLOP/s)
STEP_FLOOR_S = 0.5e-3  # one small-model optimizer step, launch-bound (forward, backward, step: ~100 kernels)
#: per lesson: runner and kernel start, torch + course_utils import, Fashion-MNIST load (measured 2.8-3.7 s here for
#: a notebook that only sets up and loads the data), plus CUDA's context and cuDNN/cuBLAS load (~1 s)
FIXED_S = 5.0
SETUP_S = 0.3  # per measurement: first calls, warm-up, calibration, the empty-loop overhead
NEED_ROUNDS = 6  # the engine's minimum for a 95 % interval (stats.min_rounds)
PROCESS_S = 4.0  # a fresh Python process: interpreter, torch + course_utils import (~2 s), CUDA context, cuDNN/cuBLAS
FORK_S = 1.5  # a child forked from a preloaded server: its own CUDA context and cuDNN/cuBLAS load, no import
#: a torchrun launch: the agent and its ranks (fresh processes), rendezvous, process group, teardown (measured
#: 8.0-9.3 s here for 2 gloo ranks on 2 idle cores, 9.6-10.4 s at load 6; 16 CPUs start 3-4 ranks as fast)
LAUNCH_S = 8.0
COLD_COMPILE_S = 30.0  # torch.compile of a small training step in a fresh process: empty cache, worker pool start
#: torch.compile in the kernel (inductor loaded, caches warm): a graph or a recompile (lesson 18's training step from
#: a filled cache took 2.3 s here, against 31.6 s cold)
WARM_COMPILE_S = 4.0
#: What every lesson together may take on an H100/H200 (a device window is ~15 min, at most 10 a command).
TARGET_S = 570.0


@dataclass(frozen=True)
class Compute:
    """A lesson's work outside its comparisons at gpu-profile sizes (from its own sizing comment)."""

    tflop: float  # FLOPs outside comparisons, in TFLOP
    steps: int  # small optimizer steps (launch-bound floor)
    data_s: float  # CPU-side seconds outside comparisons on a 16-CPU box: the data path, a profiler's start
    arm_s: float  # one call of a typical compared arm, seconds (for the min-rounds floor)
    note: str
    processes: int = 0  # fresh Python processes that use CUDA (PROCESS_S each)
    forks: int = 0  # children forked from a preloaded server (FORK_S each)
    launches: int = 0  # torchrun launches (LAUNCH_S each)
    cold_compiles: int = 0  # compiles in a fresh process with an empty cache (COLD_COMPILE_S each)
    warm_compiles: int = 0  # compiles in the kernel (WARM_COMPILE_S each)
    #: each cu.compare / cu.sweep the gpu profile runs, by its number of arms (a loop's calls each counted), or
    #: (arms, seconds) where the lesson gives that one its own budget or fixed rounds; None: counted from the
    #: source's call sites (a lower bound)
    arms: tuple[int | tuple[int, float], ...] | None = None
    budget_s: float | None = None  # the lesson's own gpu budget per comparison (None: BUDGETS["gpu"])
    step_s: float = STEP_FLOOR_S  # one of its small steps, when the lesson's own figure differs from the floor

    @classmethod
    def from_facts(cls, gpu: dict[str, Any]) -> Compute:
        """The figures a notebook's ``course.gpu`` metadata holds: every field, ``arms`` as lists.

        Raises:
            ValueError: a field is missing or unknown, or a count or time is not a number.
        """
        names = [f.name for f in fields(cls)]
        missing, unknown = [n for n in names if n not in gpu], [k for k in gpu if k not in names]
        if missing or unknown:
            raise ValueError(f"missing {missing}, unknown {unknown} (the fields of tools/estimate_gpu.py's Compute)")
        if wrong := [n for n in names if n not in ("note", "arms", "budget_s")
                     and (not isinstance(gpu[n], int | float) or isinstance(gpu[n], bool))]:
            raise ValueError(f"{', '.join(wrong)}: not a number")
        arms = gpu["arms"]
        return cls(**{**gpu, "arms": None if arms is None else tuple(a if isinstance(a, int) else tuple(a)
                                                                        for a in arms)})

    def to_facts(self) -> dict[str, Any]:
        """The figures as a notebook's ``course.gpu`` metadata (JSON: ``arms`` as lists)."""
        gpu = asdict(self)
        gpu["arms"] = None if self.arms is None else [a if isinstance(a, int) else list(a) for a in self.arms]
        return gpu

    def overhead_s(self) -> float:
        """Seconds of processes, launches and compiles."""
        return (self.processes * PROCESS_S + self.forks * FORK_S + self.launches * LAUNCH_S
                + self.cold_compiles * COLD_COMPILE_S + self.warm_compiles * WARM_COMPILE_S)


#: A lesson without sizing figures yet (tools/new_lesson.py writes these for the author to replace): a small one.
DEFAULT = Compute(10, 2_000, 0.0, 0.01, "no sizing figures here yet: assumed")


def lesson_compute(src: Path) -> Compute:
    """A lesson's figures, from its notebook's metadata (``course.gpu``); :data:`DEFAULT` where it has none."""
    gpu = json.loads(src.read_text(encoding="utf-8"))["metadata"].get("course", {}).get("gpu")
    return Compute.from_facts(gpu) if gpu else DEFAULT


def __getattr__(name: str) -> dict[str, Compute]:
    """``COMPUTE``: each lesson's own figures (not :data:`DEFAULT`) by slug, read from the notebooks when asked for."""
    if name == "COMPUTE":
        return {src.parent.name: c for src in select_lessons(None) if (c := lesson_compute(src)) != DEFAULT}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Prepended to a lesson copy by --measure: log every measurement (arms, budget, rounds) to $ESTIMATE_LOG.
HOOK = """\
import json as _json, os as _os, time as _time
import course_utils.measure.engine as _engine
_measure = _engine.measure
def _logged(fns, labels, baseline, *, opts, **kw):
    t0 = _time.perf_counter()
    m = _measure(fns, labels, baseline, opts=opts, **kw)
    with open(_os.environ["ESTIMATE_LOG"], "a") as f:
        f.write(_json.dumps({"arms": len(fns), "budget": opts.budget, "rounds_given": opts.rounds,
                             "rounds": len(next(iter(m.times.values()))),
                             "seconds": _time.perf_counter() - t0}) + "\\n")
    return m
_engine.measure = _logged
"""


def measure(src: Path, timeout: int = 600) -> list[dict]:
    """Run ``src`` in the smoke profile with :data:`HOOK` first; return its measurements."""
    import nbformat

    from tools.run_notebooks import execute_notebook

    CACHE.mkdir(parents=True, exist_ok=True)
    slug = src.parent.name
    copy = CACHE / slug / src.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(src, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(HOOK))
    nbformat.write(nb, copy)
    log = CACHE / f"{slug}.log"
    log.unlink(missing_ok=True)
    os.environ.update(ESTIMATE_LOG=str(log), COURSE_PROFILE="smoke")
    run = execute_notebook(copy, copy.parent, timeout)
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    (CACHE / f"{slug}.json").write_text(json.dumps({"error": run.error, "measurements": rows}, indent=1))
    return rows


def static_count(src: Path) -> list[dict]:
    """``cu.compare`` / ``cu.sweep`` call sites in the source, as measurements (arms unknown for a sweep: 6)."""
    nb = json.loads(src.read_text())
    rows = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        code = "".join(cell["source"])
        try:
            tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("compare", "sweep") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "cu"):
                arms = 2
                if node.func.attr == "sweep":
                    first = node.args[0] if node.args else None
                    arms = len(first.keys) if isinstance(first, ast.Dict) else 6
                rows.append({"arms": arms, "budget": None, "static": True})
    return rows


def comparison_seconds(rows: list[dict], budget: float, arm_s: float) -> float:
    """Seconds the measurements take in the gpu profile at ``budget``, floors kept.

    A measurement takes ``planned_s`` where the lesson's row gives it (its own gpu budget or fixed
    rounds), else the gpu default (``budget × (arms + 1) / 3``): the budget or rounds a smoke run
    logged say nothing about the gpu profile.
    """
    total = 0.0
    for r in rows:
        n = r["arms"]
        planned = r.get("planned_s") or budget * (n + 1) / 3
        # every key (arms + the A/A copy) runs one untimed call and one block of >= 1 call per round
        floor = NEED_ROUNDS * (n + 1) * 2 * max(arm_s, 0.02)
        total += max(planned, floor) + SETUP_S
    return total


def lesson_parts(src: Path, budget: float, *, measure_first: bool = False) -> dict:
    """One lesson's estimate in parts (seconds), and where its measurement count came from."""
    slug = src.parent.name
    cached = CACHE / f"{slug}.json"
    static = static_count(src)
    if measure_first:
        rows, how = measure(src), "measured"
    elif cached.exists():
        rows, how = json.loads(cached.read_text())["measurements"], "measured (cached)"
    else:
        rows, how = static, "call sites"
    if len(rows) < len(static):  # the smoke profile skipped some: the source's call sites are the lower bound
        rows, how = static, f"call sites ({how}: {len(rows)})"
    c = lesson_compute(src)
    if c.arms is not None and not measure_first:
        rows = [{"arms": n} if isinstance(n, int) else {"arms": n[0], "planned_s": n[1]} for n in c.arms]
        how = "the lesson's own count"
    parts = {"compare": comparison_seconds(rows, c.budget_s or budget, c.arm_s),
             "compute": max(c.tflop * 1e12 / RATE_FLOPS, c.steps * c.step_s),
             "data": c.data_s, "procs": c.overhead_s(), "fixed": FIXED_S}
    return {"lesson": slug, "measurements": len(rows), "how": how, "note": c.note, **parts,
            "total": sum(parts.values())}


def lesson_seconds(lessons: list[str] | None = None) -> dict[str, float]:
    """Each lesson's estimated seconds on an H100/H200 at the gpu budget (cached counts, else call sites)."""
    from course_utils.measure.clock import BUDGETS

    return {src.parent.name: lesson_parts(src, BUDGETS["gpu"])["total"] for src in select_lessons(lessons)}


def main(argv: list[str] | None = None) -> int:
    """Print the estimate, lesson by lesson; 1 if the total is over ``--target``."""
    from course_utils.measure.clock import BUDGETS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lessons", nargs="+", metavar="NN")
    p.add_argument("--measure", action="store_true", help="count the measurements by smoke runs first")
    p.add_argument("--budget", type=float, default=BUDGETS["gpu"], help="gpu budget per comparison (seconds)")
    p.add_argument("--target", type=float, default=TARGET_S, help="seconds for every lesson together")
    args = p.parse_args(argv)
    print(f"assumptions: {RATE_FLOPS / 1e12:.0f} TFLOP/s sustained fp32, {STEP_FLOOR_S * 1e3:.1f} ms a small step, "
          f"{FIXED_S:.0f} s fixed a lesson, {SETUP_S} s set-up a measurement, budget {args.budget:g} s a comparison "
          f"(x (arms + 1) / 3 for a sweep), at least {NEED_ROUNDS} rounds; a fresh CUDA process {PROCESS_S:g} s, "
          f"a forked child {FORK_S:g} s, a torchrun launch {LAUNCH_S:g} s, a compile {COLD_COMPILE_S:g} s cold / "
          f"{WARM_COMPILE_S:g} s warm")
    cols = ("compare", "compute", "data", "procs", "fixed", "total")
    print(f"{'lesson':<30} {'meas.':>5} " + " ".join(f"{c:>7}" for c in cols) + "  source")
    grand = 0.0
    for src in select_lessons(args.lessons):
        row = lesson_parts(src, args.budget, measure_first=args.measure)
        grand += row["total"]
        print(f"{row['lesson']:<30} {row['measurements']:>5} " + " ".join(f"{row[c]:>7.0f}" for c in cols)
              + f"  {row['how']}; {row['note']}")
    within = grand <= args.target
    print(f"{'total':<30} {'':>5} " + " ".join(f"{'':>7}" for c in cols[:-1]) + f" {grand:>7.0f}  "
          f"({grand / 60:.1f} min; target {args.target / 60:.3g} min: {'within' if within else 'OVER'})")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())

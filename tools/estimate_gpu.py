"""How long `make reference` takes on an H100/H200, lesson by lesson, without one at hand.

Three parts per lesson, each with its assumption printed:

- **Comparisons.** Every ``cu.compare`` / ``cu.sweep`` measurement the lesson runs, each at its
  gpu-profile budget (``BUDGETS["gpu"] × (arms + 1) / 3``, course_utils/measure/clock.py), or at the floor
  of the minimum rounds where the arms are too slow for the budget (``need`` rounds × every arm's
  block and untimed call). ``--measure`` counts the measurements by running each lesson in the smoke
  profile with ``course_utils.measure.engine.measure`` wrapped (loops and reruns included) and caches the
  counts in build/estimate/; without it the call sites are counted in the source (a call in a loop
  counts once: a lower bound).
- **Compute outside the comparisons**, from the lessons' own ``FlopCounterMode`` figures (the
  sizing comments in each solution notebook): FLOPs at an assumed sustained rate, or a launch-bound
  floor per optimizer step for small models, whichever is larger; plus the data path where a lesson
  has one (lesson 02 decodes images on the CPU: a 16-CPU box).
- **Processes, launches and compiles**, counted from the lesson's code at gpu sizes: fresh Python
  processes that import torch and create a CUDA context, children forked from a preloaded fork server
  (each still creates its own CUDA context and loads cuDNN/cuBLAS), ``torchrun`` launches (an agent and
  its ranks, each a fresh process, plus the rendezvous), and ``torch.compile`` compiles: cold (a fresh
  process with an empty inductor cache, the compile-worker pool started) or warm (in the kernel).
- **Fixed cost**: the runner, the kernel, imports and data loading, per lesson.

    python tools/estimate_gpu.py                 # the estimate (cached counts, else the source's call sites)
    python tools/estimate_gpu.py --measure       # count the measurements first (smoke runs, ~4 min on 2 CPUs)
    python tools/estimate_gpu.py --budget 8      # what another comparison budget would give

Exit status 1 when the total is over ``--target`` (default 9 min: a device window is about 15 minutes in
all, at most 10 a command). ``lesson_seconds()`` gives ``make reference`` each lesson's estimate, so that
a run with a ``--budget`` starts only lessons that can finish.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

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
TARGET_S = 540.0


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

    def overhead_s(self) -> float:
        """Seconds of processes, launches and compiles."""
        return (self.processes * PROCESS_S + self.forks * FORK_S + self.launches * LAUNCH_S
                + self.cold_compiles * COLD_COMPILE_S + self.warm_compiles * WARM_COMPILE_S)


#: From each solution's sizing comment (FlopCounterMode figures) as of this writing; see the notebooks.
COMPUTE: dict[str, Compute] = {
    "00_measuring": Compute(25, 0, 1.0, 0.018,
                            "344 GFLOP a step (~9 ms); 40 naive + 12 fair_timer steps, 31 matmuls of 0.14 TFLOP at "
                            "4096²; 1,000-run coverage simulation ~1 s on the CPU", arms=(2, 2, 2, 2, 2)),
    "01_lr_schedules": Compute(197, 14_000, 0.0, 0.001,
                               "11.3 GFLOP a step at batch 256, launch-bound ~0.9 ms; ~13,700 steps + 2 × 150 range "
                               "test (worst 15,600); ~1,400 evaluations of 2,000 images", arms=(3,), step_s=0.9e-3),
    "02_dataloader_workers": Compute(10, 600, 7.0, 0.01,
                                     "18.4 GFLOP a step at batch 16; 544 images an epoch at ~0.2 ms/image/core, a "
                                     "0-worker epoch ~0.15 s, the 7-arm worker sweep at its 6-round floor ~10 s; 2 "
                                     "spawn workers import torch, no CUDA (~2 s each, in data); the settings sweep "
                                     "~6 s (one arm restarts its workers every epoch)",
                                     arms=((7, 10.0), (4, 6.0), 4, 2)),
    "03_batch_size": Compute(46, 15_000, 0.0, 0.015,
                             "conv 1.15 GFLOP an example; memory table + capped search ~15 TFLOP; MLP range test + 24 "
                             "runs to 85 % ~15,000 steps, ~700 evaluations; the sweep runs 14 fixed rounds (~3.4 s)",
                             arms=((6, 3.4), 2)),
    "04_mixed_precision": Compute(42, 3_600, 1.5, 0.015,
                                  "589 GFLOP a step (~15 ms strict fp32); 12 × 300 parity steps of 9.3 GFLOP (~0.7 ms "
                                  "with autocast); CUPTI's start for the profile ~1.5 s", arms=(2, 2, 2, 2)),
    "05_optimizers": Compute(2.0, 4_200, 0.0, 0.002,
                             "18 runs to 82 %: Adam/AdamW 110-180 steps, Adam + L2 340-500; ~170 evaluations",
                             arms=(4, 3, 2, 3)),
    "06_cudnn_benchmark": Compute(5.7, 1_010, 8.0, 0.002,
                                  "24 processes (3 arms × 8: the fewest for a 95 % interval) forked from a server that "
                                  "imported torch and course_utils, 42 steps of 5.7 GFLOP each; the 6 benchmark-on "
                                  "ones autotune 3 shapes (~5 s in all); the server's start, imports only, ~3 s",
                                  forks=24, arms=(2,)),
    "07_host_device_sync": Compute(1.3, 1_550, 0.0, 0.02,
                                   "0.82 GFLOP a step; the compared arms are 50-step loops (~20 ms); ~250 steps under "
                                   "the sync counter", arms=(2, 2)),
    "08_activation_checkpointing": Compute(80, 40, 1.5, 0.1,
                                           "1.64 / 2.1 TFLOP a step plain / checkpointed (~41 / ~53 ms); the sweep at "
                                           "its 7-round floor ~7 s; CUPTI's start ~1.5 s", arms=(2, 4)),
    "09_gradient_accumulation": Compute(12, 30, 0.0, 0.015,
                                        "0.59 TFLOP a step (~15 ms) for every k; float64 checks 1.8 TFLOP", arms=(5,)),
    "10_distributed_data_parallel": Compute(0.0, 64, 1.0, 0.008,
                                            "one GPU: the ranks on the CPU at cpu sizes (13 MFLOP a step, 40 rounds "
                                            "planned from a timed round); 6 torchrun launches (the lesson's run, "
                                            "exercises 1 and 2 visible and hidden, the SLURM check)",
                                            launches=6, arms=()),
    "11_zero_grad_set_to_none": Compute(3.0, 35, 0.0, 0.003, "81 GFLOP a step (~2-3 ms)", arms=(2, 2)),
    "12_as_tensor_from_numpy": Compute(25, 90, 0.5, 0.02,
                                       "294 GFLOP a conv step, benchmarked ~0.6 s; the collate sweep on the CPU, 5 CPU "
                                       "conversions at a 1.5 s budget each, a 16 MiB copy to the device",
                                       arms=(3, (2, 1.5), (2, 1.5), (2, 1.5), (2, 1.5), (2, 1.5), 2)),
    "13_debug_tools_off": Compute(1.0, 60, 1.0, 0.05,
                                  "21 GFLOP a step; profiler arms of tens of ms (CUPTI's start ~1 s); the gradcheck "
                                  "comparison has its own 8 s budget", arms=(6, (2, 8.0), 2)),
    "14_gradient_clipping": Compute(8.0, 20_400, 0.0, 0.002,
                                    "0.31 GFLOP a step at batch 256; 16 probe + 48 seeded runs (best LRs 170-260 "
                                    "steps, high-LR runs all 400), AMP 400; ~1,000 evaluations", arms=(2, 4)),
    "15_no_bias_before_batchnorm": Compute(3.0, 35, 0.0, 0.003, "74 GFLOP a step, 25 GFLOP an evaluation pass",
                                           arms=(2, 2)),
    "16_no_grad_validation": Compute(10, 600, 2.0, 0.004,
                                     "5.7 GFLOP a step, 79 GFLOP an evaluation pass (~3 ms); 2 capped batch searches "
                                     "with out-of-memory recoveries ~2 s", arms=(2, 2)),
    "17_input_normalization": Compute(27, 20_000, 0.0, 0.0005,
                                      "0.82 GFLOP a step, launch-bound ~0.45 ms; ~20,000 steps (worst 48,000), ~800 "
                                      "evaluations of 10,000 images", arms=(6, 2), step_s=0.45e-3),
    "18_pytorch2_speedups": Compute(1.0, 1_000, 0.0, 0.003,
                                    "3 processes forked from a preloaded server (eager, A/A, compiled: one cold "
                                    "compile of the training step); in the kernel the step from the filled cache and "
                                    "2 graph-break functions; 5 comparisons and 2 sweeps (2.5 s each)",
                                    forks=3, cold_compiles=1, warm_compiles=3,
                                    arms=(2, 2, 2, 2, 2, (3, 2.5), (2, 2.5))),
    "19_capstone": Compute(5.0, 40_000, 45.0, 0.004,
                           "~150 speed-runs: 144 ablation runs (16 arms × 9 seeds), naive, stacked, 3 in the hidden "
                           "tests; ~4,500 naive-like steps at ~4 ms (PNG decoding in the process, anomaly detection: "
                           "8 small steps each) and ~4,000 stacked ones; 77 runs start 8 DataLoader workers (~25 ms "
                           "each) and decode 2,048 images: ~45 s of CPU-side work; CIFAR-10 skipped offline",
                           arms=(2, 2, 3)),
}
#: A lesson not in COMPUTE yet (a new one): assumed like a small one.
DEFAULT = Compute(10, 2_000, 0.0, 0.01, "no sizing figures here yet: assumed")

#: Prepended to a lesson copy by --measure: log every measurement (arms, budget, rounds) to $ESTIMATE_LOG.
HOOK = """\
import json as _json, os as _os, time as _time
import course_utils.measure.engine as _engine
_measure = _engine.measure
def _logged(fns, labels, baseline, *, budget, **kw):
    t0 = _time.perf_counter()
    m = _measure(fns, labels, baseline, budget=budget, **kw)
    with open(_os.environ["ESTIMATE_LOG"], "a") as f:
        f.write(_json.dumps({"arms": len(fns), "budget": budget, "rounds_given": kw.get("rounds"),
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
    c = COMPUTE.get(slug, DEFAULT)
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
          f"({grand / 60:.1f} min; target {args.target / 60:.0f} min: {'within' if within else 'OVER'})")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())

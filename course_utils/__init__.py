"""course_utils: the measurement library of the course "Faster PyTorch Training — 17 tricks, measured".

Import it as ``import course_utils as cu`` and start every notebook with ``env = cu.setup()``.
Importing it changes nothing: no seeding, no flags, no plotting style.
"""

from . import (
    ablation,
    analysis,
    calibration,
    calibration_records,
    calibration_workloads,
    capstone_extras,
    checks,
    clock,
    comparison,
    convergence,
    data,
    engine,
    env,
    exercises,
    fixes,
    graphs,
    history,
    labels,
    launch,
    memory,
    models,
    plots,
    processes,
    profiling,
    rates,
    readings,
    report,
    results,
    rounds,
    script,
    speedrun,
    stats,
    sweeps,
    syncs,
    timing,
    training,
    units,
)
from .ablation import Ablation, ablate
from .analysis import analyze
from .calibration import Calibration, calibrate, load_calibration
from .checks import Calls, assert_close, assert_grads_close, norm_error, rel_error, spy
from .comparison import Comparison
from .convergence import TargetComparison, TargetResult, compare_targets, steps_to_target
from .data import (
    DATASETS,
    Dataset,
    batches,
    image_folder,
    load_dataset,
    synthetic,
    worker_counts,
    write_image_folder,
)
from .env import (
    PROFILES,
    Env,
    autocast,
    choose_device,
    environment_record,
    get_profile,
    in_colab,
    pick_amp_dtype,
    seed_everything,
    setup,
)
from .exercises import needs
from .fixes import FIXES, DeviceInfo, SpeedConfig, Stack, fast_config
from .graphs import HeldGraph, graph_held
from .launch import Launch, torchrun
from .memory import (
    PeakMemory,
    SavedTensors,
    fits,
    is_out_of_memory,
    memory_cap,
    param_count,
    peak_memory,
    peak_memory_stats,
    saved_tensors,
)
from .models import ConvNetConfig, MLPConfig, make_convnet, make_mlp
from .plots import plot_comparison, plot_curves, plot_lr, plot_speedups, plot_waterfall, verdict_color
from .processes import ProcessRuns, in_processes
from .profiling import flop_count, op_counts, profile_table
from .properties import (
    NORMS,
    assert_follows_device,
    assert_follows_dtype,
    assert_keeps_no_graph,
    assert_no_mutation,
    assert_syncs_at_most,
    nested,
)
from .rates import Rate, RateComparison, binomial_ci, compare_rates, diverged, rate
from .readings import check_prediction, reading
from .report import Scoreboard, scoreboard
from .restores import assert_restores, restoring
from .results import CLAIMS, Effect, references, save
from .script import stepper
from .speedrun import RunResult, prepare, run_once
from .stats import mean_ci, median_ci
from .sweeps import Sweep, sweep
from .syncs import SyncCounter, count_syncs
from .timing import Timing, benchmark, compare, naive_compare
from .training import History, evaluate, train, train_step
from .units import format_bytes, format_seconds

__version__ = "0.1.0"

#: The course's repository; badges and install lines are built from it (a test checks them).
REPO_URL = "https://github.com/faster-pytorch-course/faster-pytorch-training"

__all__ = [
    "Ablation", "ablate", "ablation", "capstone_extras", "DeviceInfo", "fast_config", "FIXES", "fixes", "prepare",
    "run_once", "RunResult", "script", "SpeedConfig", "speedrun", "Stack", "stepper",
    "analysis", "analyze", "assert_close", "assert_grads_close", "autocast", "batches", "benchmark", "binomial_ci",
    "calibrate", "Calibration", "calibration", "calibration_records", "calibration_workloads", "Calls",
    "check_prediction", "checks", "choose_device", "CLAIMS", "clock", "compare", "compare_rates",
    "compare_targets",
    "comparison", "Comparison", "convergence", "ConvNetConfig", "count_syncs", "data", "Dataset",
    "DATASETS", "diverged", "Effect", "engine", "Env", "env", "environment_record", "evaluate", "exercises",
    "fits", "flop_count", "format_bytes", "format_seconds", "get_profile", "graph_held", "graphs",
    "HeldGraph", "History", "history", "image_folder", "in_colab", "in_processes", "Launch", "launch",
    "is_out_of_memory", "labels",
    "load_calibration", "load_dataset", "make_convnet",
    "make_mlp", "mean_ci", "median_ci", "memory", "memory_cap", "MLPConfig", "models",
    "naive_compare", "needs", "norm_error", "op_counts", "param_count", "peak_memory",
    "peak_memory_stats", "PeakMemory", "pick_amp_dtype", "plot_comparison", "plot_curves",
    "plot_lr", "plot_speedups", "plot_waterfall", "plots", "ProcessRuns", "processes", "profile_table", "PROFILES",
    "profiling", "rate", "Rate",
    "RateComparison", "rates", "reading",
    "readings", "references", "rel_error", "REPO_URL", "report", "results", "rounds", "save",
    "saved_tensors", "SavedTensors", "scoreboard", "Scoreboard", "seed_everything", "setup", "spy",
    "stats", "steps_to_target", "Sweep", "sweep", "sweeps", "SyncCounter", "syncs", "synthetic",
    "TargetComparison", "TargetResult", "Timing", "timing", "torchrun", "train", "train_step", "training",
    "units", "verdict_color", "worker_counts", "write_image_folder",
    # property checks for test cells (course_utils.properties, course_utils.restores)
    "assert_follows_device", "assert_follows_dtype", "assert_keeps_no_graph", "assert_no_mutation",
    "assert_restores", "assert_syncs_at_most", "nested", "NORMS", "restoring",
]

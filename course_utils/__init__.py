"""course_utils: the measurement library of the course "Faster PyTorch Training — 17 tricks, measured".

Import it as ``import course_utils as cu`` and start every notebook with ``env = cu.setup()``.
Importing it changes nothing: no seeding, no flags, no plotting style.
"""

from . import (
    checks,
    clock,
    comparison,
    convergence,
    data,
    engine,
    env,
    memory,
    models,
    plots,
    profiling,
    readings,
    report,
    results,
    rounds,
    stats,
    sweeps,
    syncs,
    timing,
    training,
    units,
)
from .checks import assert_close, assert_grads_close, rel_error
from .comparison import Comparison, analyze
from .convergence import TargetComparison, TargetResult, compare_targets, steps_to_target
from .data import DATASETS, Dataset, batches, image_folder, load_dataset, synthetic, write_image_folder
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
from .memory import PeakMemory, SavedTensors, param_count, peak_memory, peak_memory_stats, saved_tensors
from .models import ConvNetConfig, MLPConfig, make_convnet, make_mlp
from .plots import plot_comparison, plot_curves, plot_lr, plot_speedups
from .profiling import profile_table
from .readings import check_prediction, reading
from .report import Scoreboard, scoreboard
from .results import CLAIMS, Effect, references, save
from .stats import median_ci
from .syncs import SyncCounter, count_syncs
from .sweeps import Sweep, sweep
from .timing import Timing, benchmark, compare, naive_compare
from .training import History, evaluate, train, train_step
from .units import format_bytes, format_seconds

__version__ = "0.1.0"

#: The course's repository; badges and install lines are built from it (a test checks them).
REPO_URL = "https://github.com/faster-pytorch-course/faster-pytorch-training"

__all__ = [
    "CLAIMS", "Comparison", "ConvNetConfig", "Dataset", "DATASETS", "Effect", "Env", "History",
    "MLPConfig", "PeakMemory", "PROFILES", "REPO_URL", "SavedTensors", "Scoreboard", "Sweep", "SyncCounter",
    "TargetComparison", "TargetResult", "Timing", "analyze", "assert_close", "assert_grads_close",
    "autocast", "batches", "benchmark", "check_prediction", "checks", "choose_device", "clock", "compare",
    "compare_targets", "comparison", "convergence", "count_syncs", "data", "engine", "env",
    "environment_record", "evaluate", "format_bytes", "format_seconds", "get_profile",
    "image_folder", "in_colab", "load_dataset", "make_convnet", "make_mlp", "median_ci", "memory",
    "models", "naive_compare", "param_count", "peak_memory", "peak_memory_stats", "pick_amp_dtype",
    "plot_comparison", "plot_curves", "plot_lr", "plot_speedups", "plots", "profile_table",
    "profiling", "reading", "readings", "references", "rel_error", "report", "results", "rounds", "save", "saved_tensors",
    "scoreboard", "seed_everything", "setup", "stats", "steps_to_target", "sweep", "sweeps", "syncs", "synthetic",
    "timing", "train", "train_step", "training", "units", "write_image_folder",
]

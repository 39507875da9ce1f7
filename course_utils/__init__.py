"""course_utils: the measurement library of the course "Faster PyTorch Training — 17 tricks, measured".

Import it as ``import course_utils as cu`` and start every notebook with ``env = cu.setup()``.
Importing it changes nothing: no seeding, no flags, no plotting style.
"""

from . import checks, data, env, memory, models, plots, results, timing, training
from .checks import assert_close, assert_grads_close, rel_error
from .data import DATASETS, Dataset, batches, image_folder, load_dataset, synthetic, write_image_folder
from .env import (
    PROFILES,
    Env,
    choose_device,
    environment_record,
    get_profile,
    in_colab,
    seed_everything,
    setup,
)
from .memory import SavedTensors, format_bytes, param_count, peak_memory, saved_tensors
from .models import ConvNetConfig, MLPConfig, make_convnet, make_mlp
from .plots import plot_comparison, plot_curves, plot_lr, plot_speedups
from .results import CLAIMS, Effect, references, save, scoreboard
from .timing import Comparison, Timing, benchmark, compare, format_seconds, naive_compare
from .training import History, TargetResult, evaluate, steps_to_target, train, train_step

__version__ = "0.1.0"

#: The course's repository; badges and install lines are built from it (a test checks them).
REPO_URL = "https://github.com/faster-pytorch-course/faster-pytorch-training"

__all__ = [
    "CLAIMS", "DATASETS", "PROFILES", "REPO_URL",
    "Comparison", "ConvNetConfig", "Dataset", "Effect", "Env", "History", "MLPConfig",
    "SavedTensors", "TargetResult", "Timing",
    "assert_close", "assert_grads_close", "batches", "benchmark", "checks", "choose_device",
    "compare", "data", "env", "environment_record", "evaluate", "format_bytes", "format_seconds",
    "get_profile", "image_folder", "in_colab", "load_dataset", "make_convnet", "make_mlp", "memory",
    "models", "naive_compare", "param_count", "peak_memory", "plot_comparison", "plot_curves", "plot_lr",
    "plot_speedups", "plots", "references", "rel_error", "results", "save", "saved_tensors",
    "scoreboard", "seed_everything", "setup", "steps_to_target", "synthetic", "timing", "train",
    "train_step", "training", "write_image_folder",
]

"""course_utils: the measurement library of the course "Faster PyTorch Training — 17 tricks, measured".

Import it as ``import course_utils as cu`` and start every notebook with ``env = cu.setup()``.
Importing it changes nothing: no seeding, no flags, no plotting style. ``course_utils/README.md``
maps the subpackages and says where a change goes.

``cu.`` holds what the lessons use, one path per name:

- set-up and device: :func:`setup`, :func:`seed_everything`, :func:`choose_device`, :func:`autocast`,
  :func:`pick_amp_dtype`
- timing (``measure/``): :func:`compare`, :func:`sweep`, :func:`benchmark`, :func:`in_processes`,
  :class:`Comparison`, :class:`Sweep`
- seed-level verdicts (``measure/``): :func:`compare_targets`, :func:`steps_to_target`, :func:`compare_rates`,
  :func:`rate`, :func:`diverged`, :class:`TargetComparison`, :class:`TargetResult`
- counters (``counters/``): :func:`count_syncs`, :func:`saved_tensors`, :func:`peak_memory`,
  :func:`peak_memory_stats`, :func:`memory_cap`, :func:`fits`, :func:`is_out_of_memory`, :func:`param_count`,
  :func:`graph_held`, :func:`flop_count`, :func:`op_counts`, :func:`profile_table`, :class:`SyncCounter`,
  :class:`SavedTensors`, :class:`HeldGraph`
- training and models (``training/``): :func:`train`, :func:`train_step`, :func:`evaluate`, :func:`make_mlp`,
  :func:`make_convnet`, :class:`MLPConfig`, :class:`ConvNetConfig`, :class:`History`
- data (``data/``): :func:`load_dataset`, :func:`synthetic`, :func:`batches`, :func:`image_folder`,
  :func:`write_image_folder`, :class:`Dataset`
- words, results and figures (``results/``): :func:`reading`, :func:`check_prediction`, :func:`save`,
  :func:`references`, :class:`Effect`, :func:`plot_comparison`, :func:`plot_speedups`, :func:`plot_curves`,
  :func:`plot_lr`, :func:`lr_trace`, :func:`plot_waterfall`, :func:`verdict_color`, :func:`format_seconds`,
  :func:`format_bytes`
- processes (``procs/``): :func:`torchrun`
- test cells (``lesson/``): :func:`needs`, :func:`assert_close`, :func:`assert_grads_close`, :func:`norm_error`,
  :func:`spy`, :func:`nested`, :data:`NORMS`, :func:`assert_follows_device`, :func:`assert_follows_dtype`,
  :func:`assert_keeps_no_graph`, :func:`assert_no_mutation`, :func:`assert_syncs_at_most`,
  :func:`assert_restores`, :func:`restoring`

Everything else has one longer path, ``cu.<subpackage>.<module>.<name>`` (``cu.measure.stats.FASTER``),
except the tools with a namespace of their own: ``cu.capstone`` (lesson 19's speed-run),
``cu.calibration`` (the engine's error rates on the real clock) and ``cu.doctor`` (a learner's own
script diagnosed; calling ``cu.doctor("my_train.py")`` runs it). They are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

# numpy first, then torch (through the subpackages): in a kernel whose memory limit is already spent
# (a learner's runaway cell, a grading sandbox's limit), numpy's import fails with a MemoryError the
# notebook shows, while torch's C++ start-up can take the kernel down with it and the grade is lost
# (tests/test_grading_safety.py's memory hog).
import numpy  # noqa: F401

from . import _moved
from .counters.graphs import HeldGraph, graph_held
from .counters.memory import (
    SavedTensors,
    fits,
    is_out_of_memory,
    memory_cap,
    param_count,
    peak_memory,
    peak_memory_stats,
    saved_tensors,
)
from .counters.profiling import flop_count, op_counts, profile_table
from .counters.syncs import SyncCounter, count_syncs
from .data.dataset import Dataset
from .data.datasets import load_dataset
from .data.image_files import image_folder, write_image_folder
from .data.loaders import batches, synthetic
from .env import autocast, choose_device, pick_amp_dtype, seed_everything, setup
from .lesson.checks import assert_close, assert_grads_close, norm_error, spy
from .lesson.exercises import needs
from .lesson.properties import (
    NORMS,
    assert_follows_device,
    assert_follows_dtype,
    assert_keeps_no_graph,
    assert_no_mutation,
    assert_syncs_at_most,
    nested,
)
from .lesson.restores import assert_restores, restoring
from .measure.compare import benchmark, compare
from .measure.comparison import Comparison
from .measure.convergence import TargetComparison, TargetResult, compare_targets, steps_to_target
from .measure.figures import plot_comparison, plot_speedups, verdict_color
from .measure.processes import in_processes
from .measure.rates import compare_rates, diverged, rate
from .measure.sweep import Sweep, sweep
from .procs.launch import torchrun
from .results.plots import lr_trace, plot_curves, plot_lr, plot_waterfall
from .results.readings import check_prediction, reading
from .results.store import Effect, references, save
from .training.history import History
from .training.loop import evaluate, train, train_step
from .training.models import ConvNetConfig, MLPConfig, make_convnet, make_mlp
from .units import format_bytes, format_seconds

#: The release; pyproject.toml reads it from here (one place), and CHANGELOG.md has a section for it.
__version__ = "0.2.1"

#: The course's repository; badges and install lines are built from it (a test checks them).
REPO_URL = "https://github.com/faster-pytorch-course/faster-pytorch-training"

__all__ = [
    # set-up and device
    "autocast", "choose_device", "pick_amp_dtype", "seed_everything", "setup",
    # timing
    "benchmark", "compare", "Comparison", "in_processes", "sweep", "Sweep",
    # seed-level verdicts
    "compare_rates", "compare_targets", "diverged", "rate", "steps_to_target", "TargetComparison", "TargetResult",
    # counters
    "count_syncs", "fits", "flop_count", "graph_held", "HeldGraph", "is_out_of_memory", "memory_cap", "op_counts",
    "param_count", "peak_memory", "peak_memory_stats", "profile_table", "saved_tensors", "SavedTensors",
    "SyncCounter",
    # training and models
    "ConvNetConfig", "evaluate", "History", "make_convnet", "make_mlp", "MLPConfig", "train", "train_step",
    # data
    "batches", "Dataset", "image_folder", "load_dataset", "synthetic", "write_image_folder",
    # words, results and figures
    "check_prediction", "Effect", "format_bytes", "format_seconds", "lr_trace", "plot_comparison", "plot_curves",
    "plot_lr", "plot_speedups", "plot_waterfall", "reading", "references", "save", "verdict_color",
    # processes
    "torchrun",
    # test cells
    "assert_close", "assert_follows_device", "assert_follows_dtype", "assert_grads_close", "assert_keeps_no_graph",
    "assert_no_mutation", "assert_restores", "assert_syncs_at_most", "needs", "nested", "NORMS", "norm_error",
    "restoring", "spy",
]

#: Subpackages imported on first use (``cu.capstone``) rather than with ``import course_utils``.
_LAZY = ("capstone", "calibration", "doctor")

#: Names of release 0.1 that moved: old name -> (module, attribute or None for a module); see course_utils._moved.
_MOVED = _moved.MOVED


def __getattr__(name: str) -> Any:
    """``cu.capstone``, ``cu.calibration``, ``cu.doctor`` on first use; a moved 0.1 name with a DeprecationWarning."""
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    return _moved.old_name(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

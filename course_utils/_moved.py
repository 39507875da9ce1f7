"""Names of release 0.1 that moved in 0.2: they keep working, with a DeprecationWarning, for one release.

A learner's notebook saved with 0.1 says ``cu.stats.median_ci``, ``cu.launch.slurm_locally``,
``cu.training.train`` or ``cu.prepare``. ``course_utils.__getattr__`` and the ``__getattr__`` of the
subpackages that took an old module's name (``training``, ``data``, ``results``, ``calibration``) answer
them from here. 0.3 removes this module; ``CHANGELOG.md`` lists every move.
"""

from __future__ import annotations

import importlib
import types
import warnings
from typing import Any

#: Each 0.1 module and the 0.2 modules that now hold its names (the first one is its main home).
OLD_MODULES: dict[str, tuple[str, ...]] = {
    "ablation": ("capstone.ablation", "capstone.ablation_table"), "analysis": ("measure.analysis",),
    "calibration": ("calibration.runner",), "calibration_records": ("calibration.records",),
    "calibration_workloads": ("calibration.workloads",), "capstone_extras": ("capstone.extras",),
    "checks": ("lesson.checks",), "clock": ("measure.clock",),
    "comparison": ("measure.comparison", "measure.formatting"), "convergence": ("measure.convergence",),
    "data": ("data.datasets", "data.dataset", "data.loaders", "data.cifar10", "data.fashion_mnist",
             "data.image_files"),
    "engine": ("measure.engine",), "exercises": ("lesson.exercises",), "fashion_mnist": ("data.fashion_mnist",),
    "fixes": ("capstone.fixes",), "forcing": ("measure.forcing",), "graphs": ("counters.graphs",),
    "history": ("training.history",), "image_files": ("data.image_files",), "labels": ("results.labels",),
    "launch": ("procs.launch", "procs.slurm", "procs.supervise"), "memory": ("counters.memory",),
    "models": ("training.models",), "opwatch": ("lesson.opwatch",), "plots": ("results.plots", "measure.figures"),
    "processes": ("measure.processes",), "profiling": ("counters.profiling",), "properties": ("lesson.properties",),
    "rates": ("measure.rates",), "readings": ("results.readings",), "report": ("results.report",),
    "restores": ("lesson.restores",), "results": ("results.store",), "rounds": ("measure.rounds",),
    "script": ("capstone.script",), "speedrun": ("capstone.speedrun",), "speedrun_cli": ("capstone.cli",),
    "stats": ("measure.stats",), "sweeps": ("measure.sweep",), "sync_rules": ("counters.sync_rules",),
    "syncs": ("counters.syncs", "counters.sync_patches"), "target_comparison": ("measure.target_comparison",),
    "timing": ("measure.compare",), "training": ("training.loop",), "wording": ("measure.wording",),
}
#: 0.1 modules whose name a 0.2 subpackage took: the subpackage answers their old attributes.
PACKAGE_NAMES = ("calibration", "data", "results", "training")

#: Top-level ``cu.<name>`` of 0.1 that left ``cu.``: name -> the module that holds it now.
OLD_NAMES: dict[str, str] = {name: module for module, names in {
    "capstone": ("Ablation", "ablate", "DeviceInfo", "fast_config", "FIXES", "prepare", "run_once", "RunResult",
                 "SpeedConfig", "Stack", "stepper"),
    "calibration": ("Calibration", "calibrate", "load_calibration"),
    "measure.analysis": ("analyze",), "measure.rates": ("binomial_ci", "Rate", "RateComparison"),
    "measure.stats": ("mean_ci", "median_ci"), "measure.compare": ("naive_compare", "Timing"),
    "lesson.checks": ("Calls", "rel_error"), "results.store": ("CLAIMS",), "data.datasets": ("DATASETS",),
    "data.loaders": ("worker_counts",), "env": ("Env", "environment_record", "get_profile", "in_colab", "PROFILES"),
    "procs.launch": ("Launch",), "counters.memory": ("PeakMemory",), "measure.processes": ("ProcessRuns",),
    "results.report": ("scoreboard", "Scoreboard")}.items() for name in names}

#: Every moved 0.1 name: old ``cu.<name>`` -> (its new module, the attribute there or None for a module).
MOVED: dict[str, tuple[str, str | None]] = {
    **{old: (f"course_utils.{homes[0]}", None) for old, homes in OLD_MODULES.items() if old not in PACKAGE_NAMES},
    **{name: (f"course_utils.{module}", name) for name, module in OLD_NAMES.items()},
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new} in course_utils 0.2; the old name goes in 0.3", DeprecationWarning,
                  stacklevel=3)


class OldModule(types.ModuleType):
    """A 0.1 module whose names now live in several 0.2 modules: each attribute found where it went."""

    def __init__(self, old: str) -> None:
        super().__init__(f"course_utils.{old}", f"0.1's course_utils.{old}: see {', '.join(OLD_MODULES[old])}")
        self._old = old

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return old_attribute(self._old, name, warn=False)


def old_attribute(old: str, name: str, *, warn: bool = True) -> Any:
    """``cu.<old>.<name>`` of 0.1, found in the modules that hold ``old``'s names now.

    Raises:
        AttributeError: when none of them has ``name``, and at once for a dunder (``__path__``,
            ``__wrapped__``): Python and IPython probe those on any module, a half-imported one too,
            and the answer must never import anything (under a memory limit that import can kill the kernel).
    """
    if name.startswith("__"):
        raise AttributeError(f"module 'course_utils.{old}' has no attribute {name!r}")
    for home in OLD_MODULES[old]:
        module = importlib.import_module(f"course_utils.{home}")
        if name in vars(module):
            if warn:
                _warn(f"cu.{old}.{name}", f"cu.{home}.{name}")
            return vars(module)[name]
    raise AttributeError(f"module 'course_utils.{old}' has no attribute {name!r}")


def old_name(name: str) -> Any:
    """``cu.<name>`` of 0.1 (a moved module or function), with a DeprecationWarning.

    Raises:
        AttributeError: when ``name`` is not a moved 0.1 name.
    """
    if name not in MOVED:
        raise AttributeError(f"module 'course_utils' has no attribute {name!r}")
    module, attr = MOVED[name]
    short = module.replace("course_utils.", "cu.", 1)
    _warn(f"cu.{name}", f"{short}.{attr}" if attr else short)
    if attr:
        return getattr(importlib.import_module(module), attr)
    if len(OLD_MODULES[name]) > 1:
        return OldModule(name)
    return importlib.import_module(module)

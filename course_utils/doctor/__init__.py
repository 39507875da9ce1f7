"""The doctor: a training script of your own diagnosed, and every fix it can apply timed on this machine.

``cu.doctor("my_train.py")`` in a notebook, ``python -m course_utils.doctor my_train.py`` (or
``make doctor SCRIPT=my_train.py``) in a terminal. The script defines ``make_training(device)``
(:mod:`~course_utils.doctor.contract`); ``cu.doctor.EXAMPLES["naive_train"]`` is the capstone's naive
script written that way. The doctor probes a few steps with the course's counters, runs its checks (the
lessons' detectors), times each fix it can apply against the script as written with the engine
(interleaved, with an A/A control), then every fix that came out faster at once, and reports
(:class:`~course_utils.doctor.report.Report`).

- ``contract``: :func:`load_script`, :class:`Training`, :class:`DoctorError`
- ``probe``: :class:`Probe` (what the checks read), :func:`probe`; ``instruments``: what it measures with
- ``checks``: :class:`Check`, :class:`Finding`, :data:`CHECKS`
- ``fixes``: :class:`Fix`, :data:`FIXES`
- ``trial``: the comparisons; ``report``: :class:`Report`; ``run``: :func:`diagnose` (what ``cu.doctor(...)`` calls)

This subpackage may import everything in the library but ``capstone``; nothing imports it.
``cu.doctor`` is this module, and calling it calls :func:`diagnose`.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from . import checks, contract, fixes, instruments, probe, report, run, trial  # noqa: F401  (cu.doctor.<module>.<name>)
from .checks import CHECKS, Check, Finding
from .contract import DoctorError, Training, load_script
from .fixes import FIXES, Fix
from .probe import Probe
from .report import Report
from .run import diagnose

__all__ = ["CHECKS", "EXAMPLES", "FIXES", "Check", "DoctorError", "Finding", "Fix", "Probe", "Report", "Training",
           "diagnose", "load_script"]

#: Scripts that follow the contract, shipped with the package: the capstone's naive script, and a
#: small one written in a hurry (lesson 19 diagnoses both).
EXAMPLES: dict[str, Path] = {p.stem: p for p in sorted((Path(__file__).parent / "examples").glob("*.py"))}


class _CallableModule(types.ModuleType):
    """``cu.doctor(...)`` is ``cu.doctor.diagnose(...)``: the namespace and the function under one name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return diagnose(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

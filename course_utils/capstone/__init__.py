"""The capstone (lesson 19): the course's naive training script, each fix a switch, and the speed-run.

``cu.capstone.<name>`` holds what lesson 19 uses; the rest keeps its module path
(``cu.capstone.fixes.NAIVE_BATCH``). ``make speedrun`` runs ``python -m course_utils.capstone.cli``.
This subpackage may import anything in the library; nothing in the library imports it.

- ``fixes``: the fixes as switches (:class:`Stack`, :data:`FIXES`, :func:`fast_config`)
- ``script`` and ``speedrun``: the training script built with a stack (:func:`stepper`, :func:`prepare`,
  :func:`run_once`)
- ``ablation`` and ``ablation_table``: each fix alone and each fix removed, run (:func:`ablate`) and read as one
  table (:class:`Ablation`)
- ``extras``: CIFAR-10 and several GPUs, when this machine has them; ``_ddp_rank``: one torchrun rank
- ``doctor_table``: the doctor's report on the naive script beside the ablation (:func:`versus_doctor`)
- ``cli``: the speed-run on the command line
"""

# ``cu.capstone.<module>.<name>`` resolves:
from . import ablation, ablation_table, doctor_table, extras, fixes, script, speedrun  # noqa: F401
from .ablation import ablate
from .ablation_table import Ablation
from .doctor_table import versus_doctor
from .fixes import FIXES, DeviceInfo, SpeedConfig, Stack, fast_config
from .script import stepper
from .speedrun import RunResult, prepare, run_once

__all__ = ["FIXES", "Ablation", "DeviceInfo", "RunResult", "SpeedConfig", "Stack", "ablate", "fast_config", "prepare",
           "run_once", "stepper", "versus_doctor"]

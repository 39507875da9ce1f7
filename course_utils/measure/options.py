"""The engine's options: the keyword arguments that compare and sweep share, as one frozen record.

Learners call :func:`~course_utils.measure.compare.compare` and :func:`~course_utils.measure.sweep.sweep`
with keyword arguments; each builds one :class:`TimingOptions` with :meth:`TimingOptions.for_arms`
(which checks the device and fills in the profile's budget) and passes it down to
:func:`~course_utils.measure.engine.run_checked` and :func:`~course_utils.measure.engine.measure`.
The values are checked once, here, before any arm runs.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..env import check_device, get_profile
from .clock import BUDGETS
from .formatting import format_level
from .stats import family_level, min_rounds

__all__ = ["TimingOptions"]


def _whole(value: Any) -> bool:
    """True for a whole number (``int``, ``numpy.int64`` ...), False for a bool or anything else."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _real(value: Any) -> bool:
    """True for a real number (``int``, ``float``, ``numpy.float64`` ...), False for a bool or anything else."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _flag(value: Any) -> bool:
    """True for True or False."""
    return isinstance(value, bool)


def _any(value: Any) -> bool:
    """No range to check."""
    return True


#: Per field: the kind of value, whether None is allowed, the range, and the words for an error.
_RULES: tuple[tuple[str, Callable[[Any], bool], bool, Callable[[Any], bool], str], ...] = (
    ("rounds", _whole, True, lambda v: v >= 1, "a whole number, at least 1 (None: as many as the budget allows)"),
    ("budget", _real, False, lambda v: v > 0, "positive seconds"),
    ("warmup", _whole, False, lambda v: v >= 0, "a whole number of calls, 0 or more"),
    ("num_threads", _whole, True, lambda v: v >= 1, "a whole number, at least 1 (None: keep torch's current count)"),
    ("min_round_time", _real, False, lambda v: 0 <= v < math.inf, "seconds, 0 or more"),
    ("level", _real, False, lambda v: 0 < v < 1, "a coverage between 0 and 1, such as 0.95"),
    ("min_effect", _real, False, lambda v: v >= 1, "a speed-up of at least 1.0, such as 1.05 (1.0: any)"),
    ("seed", _whole, False, _any, "a whole number"),
    ("rerun", _flag, False, _any, "True or False"),
    ("progress", _flag, True, _any, "True, False or None (None: a bar only when it will take over 5 s)"),
)


@dataclass(frozen=True, kw_only=True)
class TimingOptions:
    """How the engine times one comparison or sweep: rounds, budget, warm-up, device and the verdict's rule.

    The defaults are :func:`~course_utils.measure.compare.compare`'s (a sweep warms up once, not twice);
    ``budget`` and ``device`` have none here, since theirs depend on the machine and the number of arms:
    :meth:`for_arms` fills them in as compare and sweep document.

    Attributes:
        rounds: interleaved rounds, all of them run; None: as many as ``budget`` allows.
        budget: seconds the whole measurement may take, warm-up included (positive).
        warmup: untimed calls of each arm after its first call (0 or more).
        num_threads: torch threads during the measurement (restored afterwards); None keeps the current count.
        min_round_time: seconds each arm's block of calls should last at least (0 or more).
        device: the device the arms run on (synchronised before the clock stops).
        level: coverage of the interval, or of the whole table's intervals together (between 0 and 1).
        min_effect: the smallest speed-up worth a verdict (1.0: any the interval shows).
        seed: seed of the arm orders; a rerun uses ``seed + 1``.
        rerun: measure once more when a control fails, keeping both runs.
        progress: show a progress bar; None: only when the measurement will take over 5 s.

    Raises:
        TypeError: a value of the wrong kind (a word where a number belongs, a name for ``device``).
        ValueError: a number out of its range; the message names the argument.
    """

    rounds: int | None = None
    budget: float
    warmup: int = 2
    num_threads: int | None = None
    min_round_time: float = 0.02
    device: torch.device
    level: float = 0.95
    min_effect: float = 1.0
    seed: int = 0
    rerun: bool = True
    progress: bool | None = None

    def __post_init__(self) -> None:
        """Check every value, so that a wrong one fails before any arm runs, in words that name it."""
        for name, kind, none_ok, in_range, what in _RULES:
            value = getattr(self, name)
            if value is None and none_ok:
                continue
            if not kind(value):
                raise TypeError(f"{name} must be {what}, got {value!r}")
            if not in_range(value):
                raise ValueError(f"{name} must be {what}, got {value!r}")
        if not isinstance(self.device, torch.device):
            raise TypeError(f"device must be a torch.device here, got {self.device!r}; TimingOptions.for_arms "
                            "(which compare and sweep call) takes a name such as 'cpu' or 'cuda', or None")

    @classmethod
    def for_arms(cls, arms: int, *, budget: float | None = None, device: torch.device | str | None = None,
                 **options: Any) -> TimingOptions:
        """The options for a measurement of ``arms`` arms, the baseline counted, from a learner's keywords.

        Args:
            arms: how many arms are timed, the baseline counted (a comparison has 2).
            budget: seconds; None: the profile's :data:`~course_utils.measure.clock.BUDGETS` times
                ``(arms + 1) / 3`` (a comparison: the profile's budget itself).
            device: a ``torch.device``, a name (``"cpu"``, ``"cuda"``, ``"mps"``) or None for the best
                there is, checked by :func:`~course_utils.env.check_device` before any arm runs.
            **options: the other fields, by name (see the class).

        Raises:
            TypeError: an unknown option, or a value of the wrong kind.
            ValueError: a value out of its range, or a device this machine does not have.
        """
        dev = check_device(device)
        if budget is None:
            budget = BUDGETS[get_profile(dev)] * (arms + 1) / 3
        return cls(budget=budget, device=dev, **options)

    def check_rounds(self, rows: int) -> int:
        """The fewest rounds for ``rows`` intervals (arms besides the baseline) to hold together at ``level``.

        Raises:
            ValueError: ``rounds`` is set below that minimum.
        """
        need = min_rounds(family_level(self.level, rows))
        if self.rounds is not None and self.rounds < need:
            what = f"a {format_level(self.level)} interval" if rows == 1 else (
                f"{rows} intervals that hold together with {format_level(self.level)}")
            raise ValueError(f"rounds must be at least {need} for {what}, got {self.rounds}")
        return need

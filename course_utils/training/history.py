"""What a training run recorded: :class:`History` (per-step loss, LR, both clocks, evaluations)."""

from __future__ import annotations

import itertools
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from ..units import format_seconds

__all__ = ["History"]


@dataclass
class History:
    """What :func:`train` recorded: per-step loss, LR and times on two clocks, and the evaluations.

    Both clocks leave evaluation out. ``step_time``: **device time per step (CUDA events)** on a
    GPU, host time on a CPU; the step's compute, without data loading (``data_time``) or the gaps
    between steps. ``host_step_time``: **host wall time per step, data loading included**, step
    boundary to step boundary (``time.perf_counter``); the device is synchronised only at
    evaluations and at the end, the wait charged to the step before. On a GPU single values show
    when the host was held up, and the sum is the elapsed training time, data stalls included; on
    a CPU each is ``data_time + step_time`` plus the loop's own overhead.
    """

    label: str = ""
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    step_time: list[float] = field(default_factory=list)
    data_time: list[float] = field(default_factory=list)
    host_step_time: list[float] = field(default_factory=list)
    step_clock: str = "host clock"  #: which clock ``step_time`` is on, for printouts
    eval_step: list[int] = field(default_factory=list)
    eval_accuracy: list[float] = field(default_factory=list)
    eval_time: list[float] = field(default_factory=list)
    eval_seconds: list[float] = field(default_factory=list)  #: host time each evaluation took

    @property
    def steps(self) -> int:
        """Number of optimizer steps run."""
        return len(self.loss)

    @property
    def wall_time(self) -> list[float]:
        """Cumulative ``step_time`` after each step (device time on a GPU; evaluation excluded)."""
        return list(itertools.accumulate(self.step_time))

    @property
    def host_wall_time(self) -> list[float]:
        """Cumulative ``host_step_time`` after each step: elapsed host time, data loading included."""
        return list(itertools.accumulate(self.host_step_time))

    @property
    def final_accuracy(self) -> float | None:
        """The last evaluated accuracy, or None without evaluation."""
        return self.eval_accuracy[-1] if self.eval_accuracy else None

    def steps_to(self, target: float) -> int | None:
        """First evaluated step whose accuracy reached ``target``; None if never."""
        for step, acc in zip(self.eval_step, self.eval_accuracy):
            if acc >= target:
                return step
        return None

    def time_to(self, target: float, *, clock: str = "device") -> float | None:
        """Training seconds until the accuracy first reached ``target``; None if never.

        Args:
            target: the accuracy to reach.
            clock: ``"device"`` sums ``step_time`` (compute only: what a trick changes);
                ``"host"`` sums ``host_step_time`` (data stalls and gaps between steps included).
        """
        if clock not in ("device", "host"):
            raise ValueError(f"clock must be 'device' or 'host', got {clock!r}")
        step = self.steps_to(target)
        if step is None:
            return None
        return (self.wall_time if clock == "device" else self.host_wall_time)[step - 1]

    def elapsed_to(self, target: float) -> float | None:
        """Host seconds until the accuracy first reached ``target``, evaluations included.

        What a stopwatch beside the run reads: every step's host time (data loading included)
        plus every evaluation up to and including the one that reached ``target``; None if never.
        """
        for i, (step, acc) in enumerate(zip(self.eval_step, self.eval_accuracy)):
            if acc >= target:
                return self.host_wall_time[step - 1] + sum(self.eval_seconds[:i + 1])
        return None

    def to_dict(self) -> dict[str, Any]:
        """Return the history as a JSON-serialisable dict."""
        return {"kind": "history", **asdict(self)}

    def __str__(self) -> str:
        acc = f", accuracy {self.final_accuracy:.3f}" if self.eval_accuracy else ""
        host = (f", median host wall time per step {format_seconds(statistics.median(self.host_step_time))} "
                "(data loading included)" if self.host_step_time else "")
        return (f"{self.label or 'run'}: {self.steps} steps, final loss {self.loss[-1]:.4f}{acc}, "
                f"median step {format_seconds(statistics.median(self.step_time))} ({self.step_clock}){host}, "
                f"median data wait "
                f"{format_seconds(statistics.median(self.data_time) if self.data_time else 0.0)}")

"""What a timing comparison found: :class:`Comparison`, built from per-round times by :func:`analyze`.

:func:`~course_utils.timing.compare` measures (the clock); :func:`analyze` turns the per-round
times into the speed-up, its interval, the A/A control and the verdict (no clock), so the
statistics are tested on injected times.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .stats import CONTROL_FAILED, FASTER, SLOWER, median_ci, order_statistic_ranks, verdict
from .units import format_seconds

__all__ = ["Comparison", "analyze", "check_prediction", "format_seconds"]


def interval_label(level: float, coverage: float) -> str:
    """How the interval of a comparison is described wherever it is shown."""
    return (f"distribution-free {level * 100:.0f} % interval for the median ratio (order "
            f"statistics; covers {coverage * 100:.1f} %)")


@dataclass(repr=False)
class Comparison:
    """The result of :func:`~course_utils.timing.compare`. ``speedup`` > 1: the trick is faster.

    ``ci`` and ``aa_ci`` are distribution-free intervals for the median per-round ratio (see
    :mod:`course_utils.stats`); ``interval`` says so in words; ``first_call_s`` is each arm's
    first, unwarmed call (compilation and autotuning show up there, not in the rounds).
    """

    names: tuple[str, str]
    speedup: float
    ci: tuple[float, float]
    aa_speedup: float
    aa_ci: tuple[float, float]
    verdict: str
    median_s: tuple[float, float]
    cv: tuple[float, float]
    rounds: int
    calls_per_round: int
    num_threads: int
    device: str
    first_call_s: tuple[float, float] = (float("nan"), float("nan"))
    level: float = 0.95
    interval: str = ""
    ratios: list[float] = field(repr=False, default_factory=list)
    aa_ratios: list[float] = field(repr=False, default_factory=list)

    @property
    def resolved(self) -> bool:
        """True when the data separate the arms (verdict faster or slower)."""
        return self.verdict in (FASTER, SLOWER)

    @property
    def time_ratio(self) -> float:
        """Trick time over baseline time (2.0: the trick takes twice as long)."""
        return 1.0 / self.speedup

    def summary(self) -> str:
        """One sentence that claims only what the data show."""
        base, trick = self.names
        lo, hi = self.ci
        ci = f"{self.level * 100:.0f} % interval"
        if self.verdict == FASTER:
            return f"{trick} is {self.speedup:.2f}× faster than {base} ({ci} {lo:.2f}–{hi:.2f}×)."
        if self.verdict == SLOWER:
            return (f"{trick} is slower: it takes {self.time_ratio:.2f}× the time of {base} "
                    f"({ci} {1 / hi:.2f}–{1 / lo:.2f}×).")
        control = (f"the A/A control ({base} against itself) gave {self.aa_speedup:.2f}× "
                   f"[{self.aa_ci[0]:.2f}, {self.aa_ci[1]:.2f}]")
        if self.verdict == CONTROL_FAILED:
            return (f"Control failed: {control}, so the machine was too noisy or drifting to trust "
                    f"this run ({trick} vs {base} measured {self.speedup:.2f}× [{lo:.2f}, {hi:.2f}]). "
                    "Run it again on a quieter machine.")
        return (f"Not resolvable on this hardware: {trick} vs {base} measured {self.speedup:.2f}× "
                f"[{lo:.2f}, {hi:.2f}], an interval wider than the effect, and {control}.")

    def _rows(self) -> list[tuple[str, str, str, str]]:
        return [(name, format_seconds(t), f"{cv * 100:.1f} %", format_seconds(f))
                for name, t, cv, f in zip(self.names, self.median_s, self.cv, self.first_call_s)]

    def _footer(self) -> str:
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        calls = f"{self.calls_per_round} call{'s' if self.calls_per_round != 1 else ''}"
        return (f"{self.rounds} interleaved rounds (arm order balanced) × {calls} per arm, "
                f"{threads}, {self.device}; speed-up = median of per-round "
                f"baseline/trick ratios; {self.interval}")

    def __str__(self) -> str:
        width = max(len(n) for n in self.names) + 2
        lines = [f"{'arm':<{width}}{'median time':>14}{'spread (CV)':>14}{'first call':>14}"]
        lines += [f"{n:<{width}}{t:>14}{cv:>14}{f:>14}" for n, t, cv, f in self._rows()]
        lines += [
            f"speed-up      {self.speedup:.3f}× [{self.ci[0]:.3f}, {self.ci[1]:.3f}]",
            f"A/A control   {self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}]",
            f"verdict       {self.verdict}",
            self.summary(),
            self._footer(),
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{n}</td><td>{t}</td><td>{cv}</td><td>{f}</td></tr>"
                       for n, t, cv, f in self._rows())
        return (
            "<table><thead><tr><th>arm</th><th>median time</th><th>spread (CV)</th>"
            f"<th>first call</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p><b>speed-up</b> {self.speedup:.3f}× [{self.ci[0]:.3f}, {self.ci[1]:.3f}] · "
            f"<b>A/A control</b> {self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}] · "
            f"<b>verdict</b> {self.verdict}</p><p>{self.summary()}</p><p><small>{self._footer()}</small></p>"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"comparison"``)."""
        d = asdict(self)
        d["kind"] = "comparison"
        d["summary"] = self.summary()
        return d

    def to_json(self) -> str:
        """Return :meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        """Rebuild a comparison saved with :meth:`to_dict`."""
        kw = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        for k in ("names", "ci", "aa_ci", "median_s", "cv", "first_call_s"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)

    def per_item(self, items: tuple[float, float], unit: str = "example") -> Comparison:
        """The same comparison per item, when the arms process different amounts per call.

        For a baseline step on ``items[0]`` examples and a trick step on ``items[1]``, the result
        compares time per example (the speed-up becomes the ratio of examples per second). The
        A/A control is unchanged, and the verdict is recomputed against it.
        """
        if items[0] <= 0 or items[1] <= 0:
            raise ValueError(f"items must be positive, got {items}")
        r = items[1] / items[0]
        speedup, ci = self.speedup * r, (self.ci[0] * r, self.ci[1] * r)
        return dataclasses.replace(
            self,
            names=(f"{self.names[0]}, per {unit}", f"{self.names[1]}, per {unit}"),
            speedup=speedup,
            ci=ci,
            verdict=verdict(speedup, ci, self.aa_ci),
            median_s=(self.median_s[0] / items[0], self.median_s[1] / items[1]),
            first_call_s=(self.first_call_s[0] / items[0], self.first_call_s[1] / items[1]),
            ratios=[x * r for x in self.ratios],
        )

    def plot(self, ax: Any = None) -> Any:
        """Speed-up and A/A control with their intervals."""
        from .plots import plot_comparison

        return plot_comparison(self, ax=ax)


def analyze(
    baseline: Sequence[float],
    control: Sequence[float],
    trick: Sequence[float],
    *,
    names: tuple[str, str] = ("baseline", "trick"),
    level: float = 0.95,
    first_call_s: tuple[float, float] = (float("nan"), float("nan")),
    calls_per_round: int = 1,
    num_threads: int = 1,
    device: str = "cpu",
) -> Comparison:
    """Turn per-round times of the three arms into a :class:`Comparison` (no clock involved).

    Args:
        baseline: seconds per call of the baseline, one value per round.
        control: the baseline's second copy in the same rounds (the A/A control).
        trick: the trick's seconds per call in the same rounds.
        names: display names of baseline and trick.
        level: coverage of the intervals.
        first_call_s: each arm's first call, for the record.
        calls_per_round: calls per arm per round, for the record.
        num_threads: torch threads during the measurement, for the record.
        device: the device measured, for the record.

    Returns:
        The comparison. Per-round ratios make slow drift cancel: rounds that all take twice as
        long as the one before, with the trick always twice as fast, give exactly 2.0.

    Raises:
        ValueError: the three lists differ in length, hold a non-positive time, or are too
            short for an interval at ``level``.
    """
    a, a2, b = (np.asarray(x, dtype=float) for x in (baseline, control, trick))
    if not a.size == a2.size == b.size:
        raise ValueError(f"every arm needs one time per round, got {a.size}, {a2.size}, {b.size}")
    if min(a.min(initial=1.0), a2.min(initial=1.0), b.min(initial=1.0)) <= 0:
        raise ValueError("times must be positive")
    _, _, coverage = order_statistic_ranks(a.size, level)
    ratios, aa_ratios = a / b, a / a2
    ci, aa_ci = median_ci(ratios, level), median_ci(aa_ratios, level)
    speedup = float(np.median(ratios))
    base_all = np.concatenate([a, a2])
    return Comparison(
        names=tuple(names),  # type: ignore[arg-type]
        speedup=speedup,
        ci=ci,
        aa_speedup=float(np.median(aa_ratios)),
        aa_ci=aa_ci,
        verdict=verdict(speedup, ci, aa_ci),
        median_s=(float(np.median(base_all)), float(np.median(b))),
        cv=(float(base_all.std() / base_all.mean()), float(b.std() / b.mean())),
        rounds=int(a.size),
        calls_per_round=calls_per_round,
        num_threads=num_threads,
        device=device,
        first_call_s=tuple(float(f) for f in first_call_s),  # type: ignore[arg-type]
        level=level,
        interval=interval_label(level, coverage),
        ratios=ratios.tolist(),
        aa_ratios=aa_ratios.tolist(),
    )


def check_prediction(prediction: float, result: Any, *, unit: str = "×") -> str:
    """Put the learner's prediction beside what was measured, in one line (not graded).

    Args:
        prediction: the number the learner wrote down before measuring (``my_prediction``).
        result: a :class:`Comparison` (its speed-up), anything with ``ratio`` (a target
            comparison) or ``value`` (an effect), or a plain number.
        unit: the unit of the prediction and the result.

    Returns:
        ``"you predicted 1.5×; measured 1.12× [1.05, 1.20], verdict: faster"`` (also printed).

    Raises:
        TypeError: the prediction is not a number (still the ``...`` placeholder?).
    """
    if isinstance(prediction, bool) or not isinstance(prediction, (int, float)):
        raise TypeError(f"write your prediction as a number before measuring, e.g. my_prediction = 1.5 "
                        f"(got {prediction!r})")
    if isinstance(result, Comparison):
        measured = f"{result.speedup:.3g}{unit} [{result.ci[0]:.3g}, {result.ci[1]:.3g}], verdict: {result.verdict}"
    elif hasattr(result, "ratio") and hasattr(result, "verdict"):
        measured = (f"{result.ratio:.3g}{unit} (range over seeds {result.low:.3g}–{result.high:.3g}), "
                    f"verdict: {result.verdict}")
    elif hasattr(result, "value"):
        measured = f"{result.value:.3g}{unit}"
    else:
        measured = f"{float(result):.3g}{unit}"
    line = f"you predicted {prediction:g}{unit}; measured {measured}"
    print(line)
    return line

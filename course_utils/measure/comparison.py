"""What a timing comparison found: :class:`Comparison`, and the sentence that says it (:meth:`Comparison.summary`).

:func:`~course_utils.measure.compare.compare` and :func:`~course_utils.measure.sweep.sweep` measure (the clock);
:func:`~course_utils.measure.analysis.analyze` turns the per-round times into a :class:`Comparison` (no
clock): per round the speed-up A/B of the baseline over the trick, and A/A′ of the baseline's
two copies as the control, a bias check at 99 %. Its table and the number formats every verdict
shares are in :mod:`course_utils.measure.formatting`; sentences built from its numbers in
:mod:`course_utils.measure.wording`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from . import forcing, formatting, wording
from .formatting import decimals, format_level, format_times
from .stats import CONTROL_FAILED, FASTER, SLOWER, verdict

__all__ = ["Comparison", "total_warning"]


#: The ratio of total times is flagged only when it lies this far beyond the interval's nearer end:
#: a few stalled blocks move it a little in most runs, which says nothing worth a warning.
TOTAL_MARGIN = 1.05


def total_warning(total: float, ci: tuple[float, float]) -> list[str]:
    """A warning when the ratio of total times lies well outside the median's interval (stalls)."""
    if not math.isfinite(total) or ci[0] / TOTAL_MARGIN <= total <= ci[1] * TOTAL_MARGIN:
        return []
    return [f"the ratio of total times ({total:.3f}×) lies well outside the interval of the median ratio: "
            "some rounds stalled, and the median hides them"]


@dataclass(repr=False)
class Comparison:
    """The result of :func:`~course_utils.measure.compare.compare`. ``speedup`` > 1: the trick is faster.

    ``ci`` is a distribution-free interval for the median per-round ratio (see
    :mod:`course_utils.measure.stats`); ``aa_ci`` the A/A control's (at ``aa_coverage``); ``interval``
    says so in words; ``total_ratio`` is the ratio of total times, beside the median;
    ``first_call_s`` each arm's first, unwarmed call (compilation and autotuning show up there);
    ``warnings`` what the data themselves say about the measurement; ``first_run`` the earlier
    run when a failed control made the comparison run again.
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
    trick_calls_per_round: int | None = None
    total_ratio: float = float("nan")
    aa_coverage: float = float("nan")
    min_effect: float = 1.0
    warnings: list[str] = field(default_factory=list)
    first_run: Comparison | None = field(repr=False, default=None)
    #: How the rounds were run, when not by :func:`~course_utils.measure.compare.compare` (fresh processes).
    method: str = ""
    #: Baseline blocks right after the trick's over those not, with its 99 % interval (None: not
    #: measured, or too few rounds in which one copy followed the trick and the other did not).
    carry_over: float | None = None
    carry_over_ci: tuple[float, float] | None = None
    #: Rows of the table this comparison is one row of, and the level they hold together at.
    family_rows: int = 1
    family_level: float | None = None

    @property
    def carry_failed(self) -> bool:
        """True when the baseline blocks right after the trick differed from the others (at 99 %)."""
        return self.carry_over_ci is not None and not self.carry_over_ci[0] <= 1.0 <= self.carry_over_ci[1]

    @property
    def carry_ci(self) -> tuple[float, float]:
        """The interval allowing for a detected carry-over: widened by its 99 % bound (``ci`` when none).

        Baseline blocks right after the trick that ran ``carry_over``× slower inflate the ratios
        by at most the carry-over's upper end (``ci``'s low end divided by it), and a faster
        carry-over deflates them by at most its lower end.
        """
        if not self.carry_failed:
            return self.ci
        co_lo, co_hi = self.carry_over_ci  # type: ignore[misc]
        return self.ci[0] / max(1.0, co_hi), self.ci[1] / min(1.0, co_lo)

    def carry_verdict(self) -> str:
        """The verdict allowing for a detected carry-over (the plain one when there is none).

        The plain verdict when the widened :attr:`carry_ci` gives the same, "control failed" when
        the carry-over alone could have made it.
        """
        if not self.carry_failed or self.verdict == CONTROL_FAILED:
            return self.verdict
        widened = verdict(self.carry_ci, self.aa_ci, min_effect=self.min_effect)
        return self.verdict if widened == self.verdict else CONTROL_FAILED

    def ratio_text(self) -> str:
        """``"1.13× [1.05, 1.20] (faster)"``: speed-up, interval and verdict, with digits enough."""
        return wording.ratio_text(self)

    def span(self) -> str:
        """``"1.13× [1.05, 1.20]"``: the speed-up and its interval, :meth:`ratio_text` without the verdict."""
        return wording.ratio_text(self).rsplit(" (", 1)[0]

    def medians_text(self) -> str:
        """Each arm's own median, said not to be the comparison (:func:`~course_utils.measure.wording.medians_text`)."""
        return wording.medians_text(self)

    def control_failure(self) -> str:
        """Why the control failed (carry-over, or identical arms that differed), from the numbers; "" if it did not."""
        return wording.control_failure(self)

    @property
    def resolved(self) -> bool:
        """True when the data separate the arms (verdict faster or slower)."""
        return self.verdict in (FASTER, SLOWER)

    @property
    def _n_rounds(self) -> str:
        return f"{self.rounds} round{'s' if self.rounds != 1 else ''}"

    @property
    def time_ratio(self) -> float:
        """Trick time over baseline time (2.0: the trick takes twice as long)."""
        return 1.0 / self.speedup

    def summary(self) -> str:
        """One sentence that claims only what the data show (and a note on a rerun)."""
        base, trick = self.names
        lo, hi = self.ci
        ci = f"{format_level(self.level)} interval"
        if self.verdict == FASTER:
            d = decimals(self.speedup, lo, hi)
            text = f"{trick} is {self.speedup:.{d}f}× faster than {base} ({ci} {lo:.{d}f}–{hi:.{d}f}×)."
        elif self.verdict == SLOWER:
            d = decimals(self.time_ratio, 1 / hi, 1 / lo)
            text = (f"{trick} is slower: it takes {format_times(self.time_ratio, d)} the time of {base} "
                    f"({ci} {format_times(1 / hi, d)[:-1]}–{format_times(1 / lo, d)}).")
        elif self.verdict == CONTROL_FAILED and self.carry_failed and self.aa_ci[0] <= 1.0 <= self.aa_ci[1]:
            co_lo, co_hi = self.carry_over_ci  # type: ignore[misc]
            text = (f"Control failed: carry-over. The baseline's blocks right after {trick} took "
                    f"{self.carry_over:.3f}× the time of the others ([{co_lo:.3f}, {co_hi:.3f}] at 99 %): "
                    f"{trick} leaves something behind for the next block, which would bias this comparison "
                    f"({trick} vs {base} measured {self.speedup:.2f}× [{lo:.2f}, {hi:.2f}]; allowing for the "
                    f"carry-over, [{self.carry_ci[0]:.2f}, {self.carry_ci[1]:.2f}], which includes 1). Time the "
                    "arms in fresh processes (cu.in_processes).")
        elif self.verdict == CONTROL_FAILED:
            text = (f"Control failed: two identical arms differed ({base} against itself gave "
                    f"{self.aa_speedup:.3f}× [{self.aa_ci[0]:.3f}, {self.aa_ci[1]:.3f}]), an order or "
                    f"drift effect that would bias this comparison ({trick} vs {base} measured "
                    f"{self.speedup:.2f}× [{lo:.2f}, {hi:.2f}]). Run it again on a quieter machine.")
        elif self.verdict.startswith("not resolvable with") and self.speedup < 1:  # too few rounds, slower
            text = (f"{self.verdict.capitalize()}: {trick} took {format_times(self.time_ratio)} the time of {base} "
                    f"(range {format_times(1 / hi)}–{format_times(1 / lo)} over {self._n_rounds}), too few for "
                    "an interval.")
        elif self.verdict.startswith("not resolvable with"):  # too few rounds for any interval
            text = (f"{self.verdict.capitalize()}: {trick} vs {base} measured {self.speedup:.2f}× (range "
                    f"{lo:.2f}–{hi:.2f}× over {self._n_rounds}), too few for an interval.")
        elif self.min_effect != 1.0 and (lo > 1.0 or hi < 1.0):
            d = decimals(self.speedup, lo, hi)
            text = (f"Not resolvable beyond the declared minimum {self.min_effect:g}×: {trick} vs {base} measured "
                    f"{self.speedup:.{d}f}× [{lo:.{d}f}, {hi:.{d}f}], an interval that excludes 1 but lies "
                    f"within the declared minimum: a difference smaller than the one declared worth a verdict.")
        else:
            d = decimals(self.speedup, lo, hi)
            edge = "" if self.min_effect == 1.0 else f" beyond the declared minimum {self.min_effect:g}×"
            text = (f"Not resolvable on this hardware: {trick} vs {base} measured {self.speedup:.{d}f}× "
                    f"[{lo:.{d}f}, {hi:.{d}f}], an interval that does not exclude 1{edge}.")
        if self.first_run is not None:
            why = self.first_run.control_failure() or (
                f"A/A {self.first_run.aa_speedup:.3f}× [{self.first_run.aa_ci[0]:.3f}, {self.first_run.aa_ci[1]:.3f}]")
            text += (f" (This is a rerun: in the first run the control failed, {why}; the trick measured "
                     f"{self.first_run.speedup:.2f}× there.)")
        return text

    def lines(self) -> list[str]:
        """The printed table, line by line (:func:`~course_utils.measure.formatting.table_lines`)."""
        return formatting.table_lines(self)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return formatting.table_html(self)

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as a JSON-serialisable dict (``kind`` = ``"comparison"``)."""
        d = asdict(self)
        d["kind"] = "comparison"
        d["summary"] = self.summary()
        d["first_run"] = self.first_run.to_dict() if self.first_run is not None else None
        for k in ("total_ratio", "aa_coverage"):
            if not math.isfinite(d[k]):
                d[k] = None
        return d

    def to_json(self) -> str:
        """Return :meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        """Rebuild a comparison saved with :meth:`to_dict` (also one saved by an older version)."""
        kw = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        for k in ("names", "ci", "aa_ci", "median_s", "cv", "first_call_s", "carry_over_ci"):
            if kw.get(k) is not None:
                kw[k] = tuple(kw[k])
        for k in ("total_ratio", "aa_coverage"):
            if kw.get(k) is None:
                kw.pop(k, None)
        if kw.get("first_run") is not None:
            kw["first_run"] = cls.from_dict(kw["first_run"])
        return cls(**kw)

    def reversed(self) -> Comparison:
        """The same rounds read the other way: the trick as the baseline (a tool turned *off* as the trick).

        Every ratio and interval is inverted, the arms' figures swap, and the verdict is recomputed
        by the course's rule (a smoke-profile test run forces it like any result the engine builds).
        """
        inv = lambda lo_hi: None if lo_hi is None else (1 / lo_hi[1], 1 / lo_hi[0])  # noqa: E731
        out = dataclasses.replace(
            self, names=self.names[::-1], speedup=1 / self.speedup, ci=inv(self.ci), aa_speedup=1 / self.aa_speedup,
            aa_ci=inv(self.aa_ci), median_s=self.median_s[::-1], cv=self.cv[::-1],
            first_call_s=self.first_call_s[::-1], ratios=[1 / r for r in self.ratios],
            aa_ratios=[1 / r for r in self.aa_ratios], total_ratio=1 / self.total_ratio,
            carry_over_ci=inv(self.carry_over_ci), carry_over=None if self.carry_over is None else 1 / self.carry_over,
            first_run=None if self.first_run is None else self.first_run.reversed())
        out.verdict = verdict(out.ci, out.aa_ci, min_effect=self.min_effect)
        out.verdict = out.carry_verdict()
        return forcing.apply(out)

    def per_item(self, items: tuple[float, float], unit: str = "example") -> Comparison:
        """The same comparison per item, when the arms process different amounts per call.

        For a baseline step on ``items[0]`` examples and a trick step on ``items[1]``, the result
        compares time per example (the speed-up becomes the ratio of examples per second). The
        A/A control is unchanged, and the verdict is recomputed.
        """
        if items[0] <= 0 or items[1] <= 0:
            raise ValueError(f"items must be positive, got {items}")
        r = items[1] / items[0]
        ci = (self.ci[0] * r, self.ci[1] * r)
        out = dataclasses.replace(
            self,
            names=(f"{self.names[0]}, per {unit}", f"{self.names[1]}, per {unit}"),
            speedup=self.speedup * r,
            ci=ci,
            verdict=verdict(ci, self.aa_ci, min_effect=self.min_effect),
            median_s=(self.median_s[0] / items[0], self.median_s[1] / items[1]),
            first_call_s=(self.first_call_s[0] / items[0], self.first_call_s[1] / items[1]),
            ratios=[x * r for x in self.ratios],
            total_ratio=self.total_ratio * r,
            warnings=[w for w in self.warnings if not w.startswith("the ratio of total times")]
            + total_warning(self.total_ratio * r, ci),
        )
        out.verdict = out.carry_verdict()
        return forcing.apply(out)  # a result the library builds: forced like the others in a smoke test run

"""The doctor's report on the naive script beside the capstone's own ablation, fix by fix.

The naive script was written with ten known problems (:data:`~course_utils.capstone.fixes.FIXES`);
:data:`DOCTOR_CHECKS` names the doctor's check that looks for each one. :func:`versus_doctor` lines
up, for every fix, what the ablation measured (its "alone" row: time to target, seeds as rounds) and
what the doctor found and measured (step or evaluation time, interleaved rounds). They measure
different things: a fix can shorten the time to target without changing the step (a schedule)
or speed the step without changing the time to target by much.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fixes import FIXES

__all__ = ["DOCTOR_CHECKS", "Versus", "versus_doctor"]

#: Each fix of the capstone -> the doctor's check that finds the problem it removes.
DOCTOR_CHECKS: dict[str, str] = {
    "decode_once": "data_wait",
    "workers": "data_wait",
    "constants_on_device": "tensors_from_data",  # not a built-in check: lesson 19's Exercise 4 writes it
    "no_item_log": "host_syncs",
    "no_anomaly": "debug_modes",
    "no_conv_bias": "bias_before_bn",
    "big_batch": "memory_headroom",
    "one_cycle": "lr_schedule",
    "amp": "dtype",
    "inference_eval": "eval_autograd",
}


@dataclass
class Versus:
    """One row per capstone fix: the ablation's alone row and the doctor's finding."""

    rows: list[dict[str, Any]]

    @property
    def found(self) -> list[str]:
        """The fixes whose problem the doctor found."""
        return [r["fix"] for r in self.rows if r["found"]]

    @property
    def applicable(self) -> list[str]:
        """The fixes that may help on this device: the ablation's no-ops and "slower" alone rows left out."""
        return [r["fix"] for r in self.rows if r["ablation"] not in ("no-op here", "slower")]

    @property
    def missed(self) -> list[str]:
        """The fixes of :attr:`applicable` whose problem the doctor did not report."""
        return [r["fix"] for r in self.rows if not r["found"] and r["fix"] in self.applicable]

    def both_faster(self) -> list[str]:
        """The fixes that came out "faster" in the ablation's alone row and in the doctor's timing."""
        return [r["fix"] for r in self.rows if r["ablation"] == "faster" and r["doctor"] == "faster"]

    def __str__(self) -> str:
        lines = [f"{'fix':<20} {'ablation, alone (time to target)':<34} {'doctor check':<18} doctor"]
        for r in self.rows:
            lines.append(f"{r['fix']:<20} {r['ablation']:<34} {r['check']:<18} {r['doctor_text']}")
        found = [f for f in self.found if f in self.applicable]
        lines.append(f"the doctor found {len(found)} of the {len(self.applicable)} problems the naive script was "
                     "written with whose fix is neither a no-op nor slower alone here; missed: "
                     f"{', '.join(self.missed) or 'none'}")
        return "\n".join(lines)


def versus_doctor(report: Any, ablation: Any = None, *, timings: Any = None) -> Versus:
    """Line up a doctor report on the naive script with ``ablation`` (an :class:`Ablation`, or None).

    Args:
        report: a :class:`~course_utils.doctor.report.Report` of the naive script (its own checks and
            any extra ones, such as Exercise 4's ``tensors_from_data``).
        ablation: the lesson's ablation; its "alone" rows give the ablation column ("not ablated"
            for a fix the profile leaves out, "no-op here" for one that changes nothing on this device,
            ablated or not).
        timings: another report of the same script whose fixes were timed (``report`` itself when None):
            a quick ``measure=False`` report with an extra check takes its timings from a measured one.
    """
    import copy

    from ..doctor.report import measured_text

    if timings is not None:
        timed = {f.check: f for f in timings.findings}
        findings = []
        for f in report.findings:
            f = copy.copy(f)
            if f.check in timed:
                f.comparison, f.error = timed[f.check].comparison, timed[f.check].error
            findings.append(f)
        report = copy.copy(report)
        report.findings = findings

    from .fixes import DeviceInfo, fast_config, no_ops_here

    # a fix the ablation left out is still a no-op where the device's choice is the naive script's (big_batch on a CPU)
    no_ops = no_ops_here(fast_config(DeviceInfo.here(report.device)), report.device)
    alone: dict[str, str] = {fix: "no-op here" for fix in no_ops}
    if ablation is not None:
        for kind, fix, comparison in ablation.rows():
            if kind == "alone":
                alone[fix] = "no-op here" if fix in ablation.no_ops else comparison.verdict
    by_check = {f.check: f for f in report.findings}
    rows = []
    for fix in FIXES:
        check = DOCTOR_CHECKS[fix]
        finding = by_check.get(check)
        if finding is None:
            doctor, text = "not found", "not found"
        else:
            doctor = finding.comparison.verdict if finding.comparison is not None else "found"
            text = measured_text(finding)
        rows.append({"fix": fix, "ablation": alone.get(fix, "not ablated"), "check": check,
                     "found": finding is not None, "doctor": doctor, "doctor_text": text})
    return Versus(rows)

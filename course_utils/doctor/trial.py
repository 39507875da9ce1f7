"""Time each fix the doctor can apply, then every fix that came out faster at once, against the script as written.

Each comparison is the engine's (:func:`~course_utils.measure.compare.compare`): the run as written
and the fixed run, each built afresh by the script's ``make_training``, interleaved round by round
with an A/A control. The table holds several verdicts, so each is taken at ``1 - alpha / k`` for
``k`` comparisons (Bonferroni): the chance that any "faster" or "slower" in the table is false is at
most ``alpha`` (5 %).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import torch

from .checks import Finding, fix_of
from .contract import DoctorError, Training, _one_line, build
from .fixes import Fix, combine
from .probe import Probe

__all__ = ["FAMILY_ALPHA", "Stacked", "time_fixes"]

#: The family-wise error of the doctor's table of verdicts.
FAMILY_ALPHA = 0.05


@dataclass
class Stacked:
    """The step with every fix that came out faster, against the step as written."""

    fixes: list[str]
    comparison: Any = None  #: a Comparison, or None when no fix came out faster
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"fixes": self.fixes, "error": self.error,
                "comparison": self.comparison.to_dict() if self.comparison is not None else None}


def _compare(module: types.ModuleType, device: torch.device, probe: Probe, fixes: list[Fix], label: str,
             opts: dict[str, Any]) -> Any:
    from ..measure.compare import compare

    before = torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.backends.cudnn.benchmark
    runs: list[Training] = []
    try:
        runs += [build(module, device)]
        runs += [combine(build(module, device), probe, fixes)]
        written, fixed = runs
        arms = ((written.run_evaluate, fixed.run_evaluate) if fixes[0].target == "evaluate"
                else (written.step, fixed.step))
        return compare(*arms, names=("as written", label), device=device, progress=False, **opts)
    finally:  # a script's global switch (anomaly detection) stays as the script set it; no worker outlives its arm
        for run in runs:
            run.close()
        torch.set_anomaly_enabled(before[0], before[1])
        torch.backends.cudnn.benchmark = before[2]


def time_fixes(module: types.ModuleType, device: torch.device, probe: Probe, findings: list[Finding], *,
               budget: float | None = None, progress: bool | None = None) -> Stacked | None:
    """Time each finding's fix (setting ``finding.comparison`` or ``finding.error``), then the stacked step.

    Returns:
        The :class:`Stacked` comparison of the step with every step fix that came out "faster"
        (``comparison`` None when none did), or None when no finding has a fix the doctor applies.
    """
    from ..measure.stats import FASTER, family_level
    from ..progress import progress_bar

    timed = [(f, fix) for f in findings if (fix := fix_of(f)) is not None]
    if not timed:
        return None
    steps = [fix for _, fix in timed if fix.target == "step"]
    k = len(timed) + (1 if len(steps) > 1 else 0)
    opts: dict[str, Any] = {"level": family_level(1 - FAMILY_ALPHA, k), "budget": budget}
    show = progress if progress is not None else True
    with progress_bar(len(timed) + 1, desc=f"doctor: {probe.name}", unit="comparison", disable=not show) as bar:
        for finding, fix in timed:
            bar.set_postfix_str(fix.name)
            try:
                finding.comparison = _compare(module, device, probe, [fix], fix.name, opts)
            except DoctorError as e:
                finding.error = str(e)
            except Exception as e:  # noqa: BLE001 -- a fix that breaks this script is reported, not raised
                finding.error = f"the fixed run raised {_one_line(e)}"
            bar.update()
        winners = [fix for f, fix in timed if fix.target == "step" and f.comparison is not None
                   and f.comparison.verdict == FASTER]
        stacked = Stacked([fix.name for fix in winners])
        if len(winners) == 1:
            stacked.comparison = next(f.comparison for f, fix in timed if fix is winners[0])
        elif winners:
            bar.set_postfix_str("every fix that came out faster")
            try:
                stacked.comparison = _compare(module, device, probe, winners, " + ".join(stacked.fixes), opts)
            except Exception as e:  # noqa: BLE001
                stacked.error = f"the stacked run raised {_one_line(e)}"
        bar.update()
    return stacked

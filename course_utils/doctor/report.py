"""The doctor's report: every finding with its evidence, ranked by the measured gain of its fix.

Printed, it is a table; :meth:`Report.to_markdown` is the same as a Markdown page; :meth:`Report.save`
writes both beside the course's results (``results/<machine-id>/doctor.<script>.<profile>.json`` and
``.md``); :meth:`Report.plot` draws the timed fixes with their intervals.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import Finding
from .trial import FAMILY_ALPHA, Stacked

__all__ = ["Report", "measured_text"]


def measured_text(finding: Finding) -> str:
    """What the doctor measured of the finding's fix, and whether it recommends it (through ``cu.reading``)."""
    from ..results.readings import reading

    c = finding.comparison
    if finding.convergence:
        return f"not applied: it changes what the model learns; read lesson {finding.lesson}"
    if finding.error:
        return f"not timed: {finding.error}"
    if c is None:
        return (f"not applied: a change to the code, read lesson {finding.lesson}" if finding.fix is None
                else "not timed (measure=False)")
    from .checks import fix_of

    fix = fix_of(finding)
    what = "the evaluation" if fix is not None and fix.target == "evaluate" else "the step"
    ratio = f"{what} {c.speedup:.2f}× [{c.ci[0]:.2f}, {c.ci[1]:.2f}]"
    return reading(c, faster=f"{ratio} faster: recommended",
                   slower=f"{ratio}: slower here, not recommended",
                   not_resolvable=f"{ratio}: no difference resolvable here, not recommended",
                   control_failed=f"{ratio}: the A/A control failed ({c.aa_speedup:.2f}×), not recommended")


def _gain(f: Finding) -> float:
    c = f.comparison
    return c.speedup if c is not None and not math.isnan(c.speedup) else -math.inf


@dataclass
class Report:
    """What :func:`~course_utils.doctor.run.diagnose` found and measured on one script."""

    script: str
    device: str
    profile: str
    findings: list[Finding]
    checks: list[str]  #: the checks that ran
    probe: dict[str, Any]  #: the probe's headline numbers (step time, data share, syncs per step …)
    stacked: Stacked | None = None
    env: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    saved: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The script's file name without ``.py``."""
        return Path(self.script).stem

    def ranked(self) -> list[Finding]:
        """The findings, timed fixes first by measured speed-up (largest first), then the others in check order."""
        timed = sorted((f for f in self.findings if f.comparison is not None), key=_gain, reverse=True)
        return timed + [f for f in self.findings if f.comparison is None]

    def recommended(self) -> list[Finding]:
        """The findings whose fix came out "faster" here."""
        from ..measure.stats import FASTER

        return [f for f in self.ranked() if f.comparison is not None and f.comparison.verdict == FASTER]

    def _family(self) -> str:
        timed = [f.comparison for f in self.findings if f.comparison is not None]
        if not timed:
            return ""
        return (f"{len(timed)} fix(es) timed, each verdict at {timed[0].level:.2%}: the chance that any verdict "
                f"in this table is wrong is at most {FAMILY_ALPHA:.0%} (Bonferroni)")

    def _stacked_lines(self) -> list[str]:
        from ..results.readings import reading

        s = self.stacked
        if s is None:
            return []
        if not s.fixes:
            return ["every fix to the step that came out faster, at once: none came out faster, so none is recommended"]
        if s.error or s.comparison is None:
            return [f"every fix to the step that came out faster ({', '.join(s.fixes)}): not timed: {s.error}"]
        c = s.comparison
        ratio = f"{c.speedup:.2f}× [{c.ci[0]:.2f}, {c.ci[1]:.2f}]"
        verdict = reading(c, faster=f"{ratio} faster than as written", slower=f"{ratio}: slower than as written",
                          not_resolvable=f"{ratio}: no difference resolvable from as written",
                          control_failed=f"{ratio}: the A/A control failed ({c.aa_speedup:.2f}×)")
        return [f"every fix to the step that came out faster, at once ({' + '.join(s.fixes)}): {verdict} "
                f"(step {c.median_s[0] * 1e3:.3g} ms as written, {c.median_s[1] * 1e3:.3g} ms fixed; "
                f"A/A {c.aa_speedup:.2f}×)"]

    def rows(self) -> list[dict[str, str]]:
        """One row per finding, ranked: rank, check, evidence, change, lesson, measured."""
        return [{"rank": str(i), "check": f.check, "evidence": f.evidence, "change": f.change, "lesson": f.lesson,
                 "measured": measured_text(f)} for i, f in enumerate(self.ranked(), 1)]

    def __str__(self) -> str:
        threads = f", {self.probe['threads']} torch thread(s)" if "threads" in self.probe else ""
        head = (f"doctor: {self.script} on {self.device}{threads} ({self.profile} profile), {len(self.checks)} checks, "
                f"step {self.probe.get('step_ms', float('nan')):.3g} ms (median, batch fetch included)")
        if not self.findings:
            return head + "\nno finding: every check passed"
        lines = [head]
        for r in self.rows():
            lines += [f"{r['rank']:>2}. {r['check']} (lesson {r['lesson']}): {r['evidence']}",
                      f"    change: {r['change']}", f"    measured: {r['measured']}"]
        lines += self._stacked_lines()
        if fam := self._family():
            lines.append(fam)
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def to_markdown(self) -> str:
        """The report as a Markdown page: the table, the stacked step, the family-wise error."""
        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        lines = [f"# Doctor: `{self.script}`", "",
                 f"{self.device}, {self.profile} profile; step {self.probe.get('step_ms', float('nan')):.3g} ms "
                 f"(median, batch fetch included); {len(self.checks)} checks in {self.seconds:.0f} s.", ""]
        if not self.findings:
            return "\n".join(lines + ["No finding: every check passed.", ""])
        lines += ["| # | finding | evidence (measured) | change | lesson | fix timed against the script |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r['rank']} | {r['check']} | {cell(r['evidence'])} | {cell(r['change'])} | {r['lesson']} | "
                  f"{cell(r['measured'])} |" for r in self.rows()]
        lines += [""] + [f"{line}." for line in self._stacked_lines() + ([self._family()] if self._family() else [])]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of everything measured."""
        return {"kind": "doctor", "script": self.script, "device": self.device, "profile": self.profile,
                "checks": self.checks, "probe": self.probe, "findings": [f.to_dict() for f in self.ranked()],
                "stacked": self.stacked.to_dict() if self.stacked is not None else None,
                "family_alpha": FAMILY_ALPHA, "seconds": self.seconds, "env": self.env}

    def save(self, root: str | Path | None = None) -> list[Path]:
        """Write ``doctor.<script>.<profile>.json`` and ``.md`` under ``<root>/<machine-id>/``.

        ``root`` defaults to the course's results folder
        (:func:`~course_utils.results.store.results_dir`); a smoke run never replaces a cpu one.
        """
        from ..hardware import machine_id
        from ..results.store import results_dir

        folder = (Path(root) if root is not None else results_dir()) / machine_id(self.env)
        folder.mkdir(parents=True, exist_ok=True)
        payload = {**self.to_dict(), "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        paths = []
        for suffix, text in ((".json", json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"),
                             (".md", self.to_markdown())):
            path = folder / f"doctor.{self.name}.{self.profile}{suffix}"
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(text)
            tmp.replace(path)
            paths.append(path)
        self.saved = [str(p) for p in paths]
        return paths

    def plot(self, ax: Any = None) -> Any:
        """Each timed fix (and the stacked step) as a speed-up with its interval, coloured by verdict."""
        from ..measure.figures import plot_speedups, verdict_color

        timed = [(f.fix or f.check, f.comparison) for f in self.ranked() if f.comparison is not None]
        if self.stacked is not None and self.stacked.comparison is not None and len(self.stacked.fixes) > 1:
            timed.append(("all faster fixes", self.stacked.comparison))
        if not timed:
            raise ValueError("no fix was timed: nothing to plot")
        return plot_speedups([(label, c.speedup, c.ci[0], c.ci[1]) for label, c in timed], ax=ax,
                             colors=[verdict_color(c) for _, c in timed],
                             title=f"doctor: {self.script}, each fix against the script as written")

"""Forced verdicts: run a lesson's every reading branch in a test, whatever this machine measures.

A lesson's readings are chosen by the verdicts its comparisons earn, so one run shows only the
branches this machine's noise happened to pick. Set ``COURSE_FORCE_VERDICT`` to ``faster``,
``slower``, ``not_resolvable`` or ``control_failed`` in the **smoke profile** and every result
the engine builds (a comparison, a sweep's arm, a seed-level comparison, a time-to-target
comparison, a rate comparison) carries that verdict, with numbers made consistent with it
(a 1.5× effect, an interval that clears 1 on that side, a failed A/A control …) and a warning
that says they are made up. Outside the smoke profile the variable is refused: a real run
never prints a forced number.

While a verdict is forced, :func:`~course_utils.results.readings.reading` also builds every other
verdict's text (from a copy of the result forced to that verdict), so that a branch that
cannot be formatted fails in the same run, and it writes each reading it printed to the file
named by ``COURSE_FORCE_LOG`` (one JSON line: the forced verdict, the verdict the reading
chose, its text), which ``tests/test_lesson_runs.py`` checks against the executed notebook.
Nothing happens on import.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any

from .stats import CONTROL_FAILED, FASTER, SLOWER, UNRESOLVED

__all__ = ["FORCE_ENV", "FORCE_LOG_ENV", "FORCEABLE", "READINGS_LOG_ENV", "apply", "as_verdict", "forced",
           "log_reading", "numbers"]

#: The environment variable that forces a verdict (smoke profile only).
FORCE_ENV = "COURSE_FORCE_VERDICT"
#: The file each reading printed under a forced verdict is appended to (one JSON line each).
FORCE_LOG_ENV = "COURSE_FORCE_LOG"
#: The file each reading of any run is appended to, with its numbers (``make run`` sets it).
READINGS_LOG_ENV = "COURSE_READINGS_LOG"
#: The values ``COURSE_FORCE_VERDICT`` takes, and the verdict each forces.
FORCEABLE: dict[str, str] = {"faster": FASTER, "slower": SLOWER, "not_resolvable": UNRESOLVED,
                             "control_failed": CONTROL_FAILED}
#: The forced effect: a speed-up of this size, its interval clear of 1 on the forced side.
EFFECT = 1.5
NOTE = (f"forced verdict ({FORCE_ENV}, smoke profile): the verdict and its numbers are made up to "
        "run this reading's branch, not measured")


def _smoke() -> bool:
    from ..env import get_profile  # the course's one rule for the profile

    return get_profile() == "smoke"


def forced() -> str | None:
    """The verdict ``COURSE_FORCE_VERDICT`` forces (one of the four), or None when unset.

    Raises:
        ValueError: the value is not one of :data:`FORCEABLE`, or the profile is not smoke (a
            forced verdict in a real run would print made-up numbers as results).
    """
    value = os.environ.get(FORCE_ENV, "").strip()
    if not value:
        return None
    if value not in FORCEABLE:
        raise ValueError(f"{FORCE_ENV}={value!r}: use one of {', '.join(FORCEABLE)}")
    if not _smoke():
        raise ValueError(f"{FORCE_ENV} is honoured only in the smoke profile (COURSE_PROFILE=smoke): a forced "
                         "verdict prints made-up numbers, never to be read as a result")
    return FORCEABLE[value]


def apply(result: Any) -> Any:
    """``result`` with the forced verdict, when one is set (the result itself otherwise)."""
    verdict = forced()
    return result if verdict is None else as_verdict(result, verdict)


def as_verdict(result: Any, verdict: str) -> Any:
    """A copy of ``result`` that earned ``verdict``, with numbers consistent with it.

    ``result`` is a :class:`~course_utils.measure.comparison.Comparison`, a
    :class:`~course_utils.measure.target_comparison.TargetComparison` or a
    :class:`~course_utils.measure.rates.RateComparison`; anything else is returned as it is. A rate
    comparison reads "faster" as a lower rate, "slower" as a higher one, and has no control.
    """
    # told apart by their fields: the modules that define them import this one
    if hasattr(result, "speedup") and hasattr(result, "aa_ci"):  # a Comparison
        return _comparison(result, verdict)
    if hasattr(result, "steps_ratios") and hasattr(result, "step_ci"):  # a TargetComparison
        return _target(result, verdict)
    if hasattr(result, "p_value") and hasattr(result, "only_trick"):  # a RateComparison
        return _rate(result, verdict)
    return result


def _factor(verdict: str) -> tuple[float, tuple[float, float]]:
    if verdict == FASTER:
        return EFFECT, (1.3, 1.7)
    if verdict == SLOWER:
        return 1 / EFFECT, (1 / 1.7, 1 / 1.3)
    return 1.0, (0.9, 1.1)


def _comparison(c: Any, verdict: str) -> Any:
    speed, ci = _factor(verdict)
    base = c.median_s[0] if math.isfinite(c.median_s[0]) and c.median_s[0] > 0 else 1e-3
    aa = (1.3, (1.2, 1.5)) if verdict == CONTROL_FAILED else (1.0, (0.95, 1.05))
    first = None if c.first_run is None else _comparison(c.first_run, verdict)
    return dataclasses.replace(
        c, speedup=speed, ci=ci, aa_speedup=aa[0], aa_ci=aa[1], verdict=verdict, median_s=(base, base / speed),
        ratios=[speed] * max(len(c.ratios), 1), aa_ratios=[aa[0]] * max(len(c.aa_ratios), 1), total_ratio=speed,
        carry_over=None, carry_over_ci=None, warnings=[NOTE], first_run=first)


def _target(c: Any, verdict: str) -> Any:
    speed, (lo, hi) = _factor(verdict)
    n = len(c.seeds)
    if verdict == UNRESOLVED:  # the seeds go both ways
        steps_ratios = [1.25 if i % 2 == 0 else 0.8 for i in range(n)]
        lo, hi = 0.8, 1.25
    else:
        steps_ratios = [speed] * n
    base = [s if s is not None else 100.0 for s in c.steps[0]] or [100.0] * n
    trick = [b / r for b, r in zip(base, steps_ratios)]
    return dataclasses.replace(
        c, verdict=verdict if verdict != UNRESOLVED else f"not resolvable with {n} seeds",
        ratio=speed, low=lo, high=hi, ratios=list(steps_ratios), steps_ratios=list(steps_ratios),
        steps=(list(base), trick), step_speedup=1.0, step_ci=(0.98, 1.02),
        step_basis=f"{c.step_basis} [{NOTE}]")


#: A rate comparison's verdicts (:data:`course_utils.measure.rates.LOWER` and ``HIGHER``, which import this module).
LOWER, HIGHER = "lower", "higher"


def _rate(c: Any, verdict: str) -> Any:
    n = len(c.seeds)
    if verdict in (FASTER, SLOWER) and n:
        lower = verdict == FASTER
        only = max(n // 2, 1)
        return dataclasses.replace(c, verdict=LOWER if lower else HIGHER, both=0, neither=n - only,
                                   only_baseline=only if lower else 0, only_trick=0 if lower else only,
                                   rates=(only / n, 0.0) if lower else (0.0, only / n), p_value=0.5 ** (only - 1))
    return dataclasses.replace(c, verdict=f"not resolvable with {n} seeds", only_baseline=0, only_trick=0,
                               both=0, neither=n, rates=(0.0, 0.0), p_value=1.0)


def log_reading(result: Any, kind: str, text: str) -> None:
    """Append a printed reading, with the numbers it reads, to a log when one is asked for.

    Under a forced verdict the log is ``COURSE_FORCE_LOG``; in any run, ``COURSE_READINGS_LOG``
    (``make run`` sets it, and ``build/readings.md`` lists every reading beside its numbers, for
    a reader to check that no sentence contradicts them). Nothing is written otherwise.
    """
    verdict = forced()
    path = os.environ.get(FORCE_LOG_ENV) if verdict is not None else os.environ.get(READINGS_LOG_ENV)
    if not path:
        return
    entry = {"forced": verdict, "verdict": str(getattr(result, "verdict", "")), "kind": kind, "text": text,
             "result": type(result).__name__, "numbers": numbers(result)}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def numbers(result: Any) -> str:
    """What a reading reads, in one line: names, ratio and interval, per-seed counts or rates."""
    from . import wording

    names = getattr(result, "names", None)
    arms = f"{names[1]} vs {names[0]}: " if names else ""
    try:
        steps = list(getattr(result, "steps_ratios", None) or [])
        if steps and (all(r == 0 for r in steps) or all(math.isinf(r) for r in steps)):
            never = names[1] if steps[0] == 0 else names[0]
            return arms + f"{never} never reached the target on any of {len(steps)} seeds (no ratio), {result.verdict}"
        if hasattr(result, "speedup") or hasattr(result, "steps_ratios"):
            text = arms + wording.ratio_text(result)
            if hasattr(result, "steps_ratios") and result.steps_ratios:
                text += f"; {wording.per_seed(result)}; step time {result.step_speedup:.3f}× " \
                        f"[{result.step_ci[0]:.3f}, {result.step_ci[1]:.3f}]"
            return text
        if hasattr(result, "rates"):
            return (f"{result.what}: {names[0]} {result.rates[0]:.0%}, {names[1]} {result.rates[1]:.0%} "
                    f"(p = {result.p_value:.3g}), {result.verdict}")
    except (TypeError, ValueError, AttributeError, IndexError) as e:  # a record, not a check: never fail a run
        return f"({type(e).__name__}: {e})"
    return arms + str(getattr(result, "verdict", ""))

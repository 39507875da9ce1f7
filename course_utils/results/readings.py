"""Words for results: the one way a lesson interprets a verdict, and the learner's prediction.

:func:`reading` is how every printed interpretation is chosen: the lesson writes one text per
verdict (for a rate comparison the three it can earn: lower, higher, not resolvable), and the
result picks. A reading that leaves out "faster", "slower" or "not resolvable" is refused;
"control failed" has a default, :func:`control_failed_text`, that states the failed control's own
numbers, so a "control failed" can never print the "not resolvable" text.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..measure import forcing, wording
from ..measure.rates import HIGHER, LOWER, RateComparison
from ..measure.stats import CONTROL_FAILED, FASTER, SLOWER, UNRESOLVED, verdict_kind

__all__ = ["check_prediction", "control_failed_text", "reading"]

Text = str | Callable[[Any], str]


def reading(result: Any, *, not_resolvable: Text, faster: Text | None = None, slower: Text | None = None,
            control_failed: Text | None = None, lower: Text | None = None, higher: Text | None = None) -> str:
    """The text for the verdict ``result`` earned, from one text per verdict.

    Args:
        result: anything with a ``verdict``: a :class:`~course_utils.measure.comparison.Comparison`, one
            arm of a :class:`~course_utils.measure.sweep.Sweep`, a
            :class:`~course_utils.measure.convergence.TargetComparison` (a seed-level "not resolvable
            with 3 seeds" reads as ``not_resolvable``).
        faster: the text for "faster", or a function of the result returning it (for numbers
            that exist only for that verdict).
        slower: the same for "slower".
        not_resolvable: the same for "not resolvable" (also a seed-level one).
        control_failed: the same for "control failed" (two identical arms differed); by default
            :func:`control_failed_text`, the failed control's own numbers and its remedy.
        lower: for a :class:`~course_utils.measure.rates.RateComparison` only (instead of faster, slower and
            control failed): the text for "the trick's rate is lower" (e.g. fewer runs diverged).
        higher: the same for "the trick's rate is higher".

    Returns:
        The chosen text (print it).

    Raises:
        TypeError: a reading is missing or is not text, or belongs to the other kind of result
            (``lower`` for a timing, ``faster`` for a rate); ``result`` has no verdict.
        ValueError: a reading is empty.
    """
    is_rate = isinstance(result, RateComparison)
    if control_failed is None and not is_rate:
        control_failed = control_failed_text
    texts = ({LOWER: lower, HIGHER: higher, UNRESOLVED: not_resolvable} if is_rate else
             {FASTER: faster, SLOWER: slower, UNRESOLVED: not_resolvable, CONTROL_FAILED: control_failed})
    other = ({"faster": faster, "slower": slower, "control_failed": control_failed} if is_rate else
             {"lower": lower, "higher": higher})
    for name, text in other.items():
        if text is not None:
            raise TypeError(f"{type(result).__name__} has no {name!r} verdict: its verdicts are "
                            + ", ".join(repr(k) for k in texts))
    for kind, text in texts.items():
        if text is None:
            arg = "not_resolvable" if kind == UNRESOLVED else kind.replace(" ", "_")
            raise TypeError(f"reading() is missing the text for the verdict {kind!r}: pass {arg}=...")
        if not (isinstance(text, str) or callable(text)):
            raise TypeError(f"the reading for {kind!r} must be text or a function of the result, got "
                            f"{type(text).__name__}")
        if isinstance(text, str) and not text.strip():
            raise ValueError(f"the reading for {kind!r} is empty: write what that verdict means")
    if not hasattr(result, "verdict"):
        raise TypeError(f"reading() needs a result with a verdict (a Comparison, a sweep's arm, a "
                        f"TargetComparison, a RateComparison), got {type(result).__name__}")
    kind = result.verdict if result.verdict in (LOWER, HIGHER) else verdict_kind(result.verdict)
    out = _text(texts[kind], result)
    if forcing.forced() is not None and not _BUILDING:  # a test run: build every other branch's text too
        _BUILDING.append(True)  # readings nested in those branches are built, not printed: no log
        try:
            for other in (FASTER, SLOWER, UNRESOLVED, CONTROL_FAILED):
                copy = forcing.as_verdict(result, other)
                other_kind = copy.verdict if copy.verdict in (LOWER, HIGHER) else verdict_kind(copy.verdict)
                _text(texts[other_kind], copy)
        finally:
            _BUILDING.clear()
    if not _BUILDING:
        forcing.log_reading(result, kind, out)  # only when a log is asked for
    return out


def control_failed_text(result: Any) -> str:
    """What :func:`reading` says for "control failed" when the lesson gives no text of its own.

    The failed control's own numbers, never the "not resolvable" text. For a comparison (or a
    sweep's arm): what the arms measured, why the control failed (two identical arms that
    differed, with the A/A interval, or a carry-over) and the remedy for that failure. For a
    seed-level comparison, whose step-time comparison's control failed: its summary.
    """
    why = result.control_failure() if callable(getattr(result, "control_failure", None)) else ""
    if why:
        base, trick = result.names
        measured = wording.ratio_text(result).rsplit(" (", 1)[0]  # "1.13× [1.05, 1.20]"
        again = ", in the automatic rerun too" if getattr(result, "first_run", None) is not None else ""
        fix = ("time the arms in fresh processes (cu.in_processes)" if why.startswith("a carry-over")
               else "run the cell again on a quieter machine")
        return f"No conclusion ({trick} vs {base} measured {measured}): {why}{again}; {fix}."
    if callable(getattr(result, "summary", None)):
        then = " Rerun the step-time comparison, then this cell." if hasattr(result, "step_basis") else ""
        return f"No conclusion. {result.summary()}{then}"
    return f"No conclusion: the control failed ({result.verdict}); run the cell again on a quieter machine."


#: Non-empty while a forced test run builds the branches it does not print.
_BUILDING: list[bool] = []


def _text(chosen: Text, result: Any) -> str:
    out = chosen(result) if callable(chosen) else chosen
    if not isinstance(out, str):
        raise TypeError(f"the reading function for {result.verdict!r} returned {type(out).__name__}, not text")
    return out


def check_prediction(prediction: float | None, result: Any, *, unit: str = "×") -> str:
    """Put the learner's prediction beside what was measured, in one line (not graded).

    Args:
        prediction: the number the learner wrote down before measuring (``my_prediction``);
            ``None`` (as in the release) reads "no prediction recorded".
        result: a :class:`~course_utils.measure.comparison.Comparison` (its speed-up), anything with
            ``ratio`` (a target comparison) or ``value`` (an effect), or a plain number.
        unit: the unit of the prediction and the result.

    Returns:
        ``"you predicted 1.5×; measured 1.12× [1.05, 1.20], verdict: faster"`` (also printed).

    Raises:
        TypeError: the prediction is neither a number nor None.
    """
    if prediction is not None and (isinstance(prediction, bool) or not isinstance(prediction, (int, float))):
        raise TypeError(f"write your prediction as a number before measuring, e.g. my_prediction = 1.5 "
                        f"(got {prediction!r})")
    steps = list(getattr(result, "steps_ratios", None) or [])
    if hasattr(result, "speedup") and hasattr(result, "ci"):
        shown = wording.ratio_text(result).rsplit(" (", 1)[0].replace("×", unit)  # "1.13× [1.05, 1.20]"
        measured = f"{shown}, verdict: {result.verdict}"
    elif steps and (all(r == 0 for r in steps) or all(math.isinf(r) for r in steps)):
        never = result.names[1] if steps[0] == 0 else result.names[0]
        measured = (f"{never} never reached {result.target:.0%} on any of {len(steps)} seeds (no ratio), "
                    f"verdict: {result.verdict}")
    elif hasattr(result, "ratio") and hasattr(result, "verdict"):
        measured = (f"{wording.ratio_text(result).replace('×', unit).rsplit(' (', 1)[0]} ({result.interval}), "
                    f"verdict: {result.verdict}")
    elif hasattr(result, "value"):
        measured = f"{result.value:.3g}{unit}"
    else:
        measured = f"{float(result):.3g}{unit}"
    said = "no prediction recorded" if prediction is None else f"you predicted {prediction:g}{unit}"
    line = f"{said}; measured {measured}"
    print(line)
    return line

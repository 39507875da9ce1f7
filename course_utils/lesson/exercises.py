"""What a lesson cell does when it needs an exercise the learner has not finished yet.

A student release has ``raise NotImplementedError`` stubs; a cell three cells later that uses the
stub (or a name the answer cell would have defined) would otherwise stop with a ``NameError`` that
says nothing about why. Wrap such a cell::

    with cu.needs("Exercise 2"):
        result = cu.compare(baseline, my_step, ...)

While the exercise is unfinished the block stops at the first ``NotImplementedError`` raised by
notebook code (a stub) or ``NameError``, prints which exercise to finish first, and the notebook
goes on: the cells that do not need it still run. A stub re-raised by the engine (an arm of a
comparison that raised, ``raise RuntimeError(...) from stub_error``) counts as the stub. A
``NotImplementedError`` with a message (an operator missing on a device) is not a stub and
propagates. Every other exception propagates. When the exercise is done the block runs as if it
were not there. The grading tests check that a solution never prints the message, so the
wrapper cannot hide a bug in a lesson.
"""

from __future__ import annotations

import sys
import traceback
from types import TracebackType

__all__ = ["MESSAGE", "needs"]

#: The first words of what :func:`needs` prints; the grading tests look for them in solutions.
MESSAGE = "This cell needs"


def _is_stub(exc: BaseException, tb: TracebackType | None) -> bool:
    """Whether ``exc`` is a release stub's bare ``raise NotImplementedError()``.

    Typed into the notebook (the innermost frame is notebook code) with no message, or the same
    re-raised by a DataLoader from a worker process. A ``NotImplementedError`` with a message (an
    operator missing on MPS, say) is a real error and propagates.
    """
    if not isinstance(exc, NotImplementedError):
        return False
    text = str(exc)
    if not text:
        return _from_notebook(tb)
    return text.startswith("Caught NotImplementedError in DataLoader worker") and \
        text.rstrip().endswith("NotImplementedError")


def _from_notebook(tb: TracebackType | None) -> bool:
    """Whether the innermost frame that raised is code typed into the notebook (a stub)."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return False
    name = frames[-1].filename
    return name.startswith("<") or "ipykernel" in name or "ipython-input" in name


def _stub_in_chain(exc: BaseException | None, tb: TracebackType | None) -> bool:
    """Whether ``exc`` is a stub, or was raised ``from`` one (an engine wrapper naming the arm)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if _is_stub(exc, tb):
            return True
        exc = exc.__cause__
        tb = exc.__traceback__ if exc is not None else None
    return False


class needs:  # noqa: N801 - used as ``with cu.needs(...)`` like a function
    """Context manager: run the block, or say which unfinished exercise it needs and skip it.

    ``exercises`` name what must be finished first, as the headings do ("Exercise 2"). The
    block is skipped on a ``NameError`` or on a ``NotImplementedError`` raised in notebook code;
    ``skipped`` tells afterwards whether it was.
    """

    def __init__(self, *exercises: str) -> None:
        if not exercises or not all(isinstance(e, str) and e.strip() for e in exercises):
            raise ValueError('name the exercise(s) the cell needs, e.g. cu.needs("Exercise 2")')
        self.exercises = exercises
        self.skipped = False

    def __enter__(self) -> needs:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if exc_type is None:
            return False
        if not (issubclass(exc_type, NameError) or (exc is not None and _stub_in_chain(exc, tb))):
            return False
        self.skipped = True
        what = " and ".join(self.exercises)
        detail = f" ({exc_type.__name__}: {exc})" if issubclass(exc_type, NameError) else ""
        print(f"{MESSAGE} {what}: finish it above, run its cell, then run this cell again{detail}. "
              "The cells that do not need it still run.", file=sys.stdout)
        return True

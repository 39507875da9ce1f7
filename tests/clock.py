"""Clock helpers for the tests: retries for the tests that time real work, injected times for the rest.

The rule (tests/conftest.py and CONTRIBUTING.md say it too): a test whose assertion depends on the
wall clock (a speed ratio, a verdict on real work, calls per block or rounds planned from measured
times, "took less than N s", a budget kept, a throughput) either

* runs on **injected times** (preferred): :func:`inject_arm_seconds` gives every arm of
  ``cu.compare`` / ``cu.sweep`` a fixed cost per call on a :class:`VirtualClock`, or a
  :class:`VirtualClock` replaces the ``time`` module of the code under test; or
* is marked ``@pytest.mark.clock`` and retries its measurement with :func:`retried`, so that it
  fails by chance less than once in 1,000 runs, on a busy machine too (CI and learners run the tests
  beside other work).

A ``timeout=`` that only stops a hung test (a generous multiple of what the work takes on a loaded
machine) is no assertion about time.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

R = TypeVar("R")

#: Independent runs a clock test gets. A check that fails by chance in one run in 10 (a 95 %
#: interval misses one in 20) then fails three times in a row once in 1,000 runs or less.
TRIES = 3


def retried(fn: Callable[[int], R], ok: Callable[[R], bool], tries: int = TRIES) -> R:
    """Run ``fn(seed)`` until ``ok(result)`` or ``tries`` independent runs; return the last result.

    ``ok`` checks every clock-dependent assertion the test then makes on the result; the test asserts
    them (and anything deterministic) on the returned value, so a real failure still says what failed.
    """
    for seed in range(tries):
        result = fn(seed)
        if ok(result):
            break
    return result


class VirtualClock:
    """A ``perf_counter`` that moves only when the test says so (:meth:`advance`, :meth:`sleep`)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    monotonic = perf_counter

    def advance(self, seconds: float) -> None:
        self.now += seconds

    sleep = advance

    @property
    def module(self) -> _Time:
        """A stand-in for the ``time`` module: this clock's perf_counter, monotonic and sleep; the rest real."""
        return _Time(self)

    def install(self, monkeypatch: Any, *modules: Any) -> VirtualClock:
        """Replace ``time`` in each of ``modules`` (which use ``import time``) by this clock."""
        for module in modules:
            assert _is_time(getattr(module, "time", None)), f"{module.__name__} does not use `import time`"
            monkeypatch.setattr(module, "time", self.module)
        return self


class _Time:
    """The ``time`` module with a :class:`VirtualClock`'s perf_counter, monotonic and sleep."""

    def __init__(self, clock: VirtualClock) -> None:
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        if name in ("perf_counter", "monotonic", "sleep"):
            return getattr(self._clock, name)
        return getattr(time, name)


def _is_time(module: Any) -> bool:
    """Whether ``module`` is the ``time`` module or a stand-in that an earlier injection put there."""
    return module is time or isinstance(module, _Time)


def inject_arm_seconds(monkeypatch: Any, seconds: Mapping[Callable[[], Any], float], *, noise: float = 0.02,
                       seed: int = 0) -> VirtualClock:
    """Give each arm of ``cu.compare`` / ``cu.sweep`` a known cost per call: no wall clock is read.

    Replaces ``course_utils.measure.clock.time_calls`` (and ``loop_overhead``: 0 s) wherever the library
    holds them, and the ``time`` module of those modules (the engine's budget) by a
    :class:`VirtualClock` that each timed block advances. A block of an arm costs ``seconds[arm]``
    per call times a log-normal factor (``noise``, seeded: the same numbers every run). The arms
    themselves are not called.
    """
    from course_utils.measure import clock as real

    rng = random.Random(seed)
    virtual = VirtualClock()

    def time_calls(fn: Callable[[], Any], name: str, calls: int, device: Any) -> float:
        if fn not in seconds:
            raise KeyError(f"no injected seconds per call for the arm {name!r}")
        per_call = seconds[fn] * math.exp(rng.gauss(0.0, noise))
        virtual.advance(per_call * calls)
        return per_call

    def loop_overhead(calls: int, device: Any, repeats: int = 5) -> float:
        return 0.0

    fakes = {"time_calls": (real.time_calls, time_calls), "loop_overhead": (real.loop_overhead, loop_overhead)}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "course_utils" or name.startswith("course_utils.")):
            continue
        patched = False
        for attr, (original, fake) in fakes.items():
            if getattr(module, attr, None) is original:
                monkeypatch.setattr(module, attr, fake)
                patched = True
        if patched and _is_time(getattr(module, "time", None)):
            monkeypatch.setattr(module, "time", virtual.module)
    return virtual

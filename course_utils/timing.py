"""The measurement engine: time one function, or compare a baseline and a trick honestly.

``compare`` follows the course's measurement standard: warm up, synchronise the device, run the
arms interleaved in random order round by round, report the median of per-round ratios with a
bootstrap 95 % interval, run an A/A control (the baseline against itself) in the same rounds, and
print "not resolvable on this hardware" when the data cannot separate the arms.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from .env import choose_device, synchronize

__all__ = ["Comparison", "Timing", "benchmark", "bootstrap_ci", "compare", "format_seconds", "naive_compare"]

FASTER, SLOWER, UNRESOLVED = "faster", "slower", "not resolvable on this hardware"


def format_seconds(seconds: float) -> str:
    """Format a duration with a unit that keeps 3 significant figures (``'12.3 ms'``)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"  # pragma: no cover


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval for the median of ``values``.

    Args:
        values: per-round measurements (at least 2).
        n_boot: bootstrap resamples.
        level: coverage of the interval.
        seed: seed of the resampling generator, so the same data give the same interval.

    Returns:
        ``(low, high)`` bounds of the interval for the median.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        raise ValueError("bootstrap_ci needs at least 2 values")
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(data, size=(n_boot, data.size), replace=True), axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(medians, tail)), float(np.quantile(medians, 1.0 - tail))


def _check_callable(fn: Any, argname: str) -> None:
    if not callable(fn):
        raise TypeError(f"{argname} must be a callable taking no arguments, got {type(fn).__name__}")


@contextlib.contextmanager
def _threads(num_threads: int | None) -> Iterator[int]:
    """Pin torch's intra-op thread count for the block, then restore it."""
    old = torch.get_num_threads()
    if num_threads is not None:
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        torch.set_num_threads(num_threads)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(old)


def _call(fn: Callable[[], Any], name: str) -> None:
    try:
        fn()
    except Exception as e:  # name the arm, keep the original traceback
        raise RuntimeError(f"the arm {name!r} raised {type(e).__name__}: {e}") from e


def _time_calls(fn: Callable[[], Any], name: str, calls: int, device: torch.device) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls, synchronised (CUDA events on GPU)."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        synchronize(device)
        start.record()
        for _ in range(calls):
            _call(fn, name)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / calls
    synchronize(device)
    t0 = time.perf_counter()
    for _ in range(calls):
        _call(fn, name)
    synchronize(device)
    return (time.perf_counter() - t0) / calls


@dataclass
class Timing:
    """The result of :func:`benchmark`: seconds per call of one function."""

    label: str
    median_s: float
    iqr_s: float
    mean_s: float
    measurements: int
    num_threads: int
    device: str

    def __str__(self) -> str:
        return (
            f"{self.label}: {format_seconds(self.median_s)} per call (median, IQR "
            f"{format_seconds(self.iqr_s)}, {self.measurements} measurement"
            f"{'s' if self.measurements != 1 else ''}, "
            f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}, {self.device})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the timing as a JSON-serialisable dict."""
        return asdict(self)


def benchmark(
    fn: Callable[[], Any],
    *,
    label: str = "fn",
    num_threads: int | None = None,
    min_run_time: float = 0.5,
    device: torch.device | str | None = None,
) -> Timing:
    """Time one function with ``torch.utils.benchmark`` (warm-up, sync, blocked runs).

    Use it to see how long one thing takes; to claim that one thing is faster than another,
    use :func:`compare`, which interleaves the two and runs an A/A control.

    Args:
        fn: a callable taking no arguments.
        label: a name for the printout.
        num_threads: torch threads during timing; the current count when omitted (note that
            ``torch.utils.benchmark.Timer`` itself defaults to 1).
        min_run_time: seconds of measurement at least.
        device: the device ``fn`` runs on (for the record; the Timer synchronises CUDA itself).

    Returns:
        A :class:`Timing` with median, IQR and mean seconds per call.

    Raises:
        TypeError: ``fn`` is not callable.
        RuntimeError: ``fn`` raised; the message names ``label``.
    """
    import logging

    # torch.utils.benchmark pulls in cpp_extension, which logs "No CUDA runtime is found" on
    # machines without a GPU; that line says nothing about the measurement.
    ext_log = logging.getLogger("torch.utils.cpp_extension")
    level = ext_log.level
    ext_log.setLevel(logging.ERROR)
    try:
        from torch.utils import benchmark as tbench
    finally:
        ext_log.setLevel(level)

    _check_callable(fn, "fn")
    device = torch.device(device) if device is not None else choose_device()
    threads = num_threads or torch.get_num_threads()
    _call(fn, label)  # warm-up, and a clear error before the Timer wraps it
    timer = tbench.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads, label=label)
    try:
        m = timer.blocked_autorange(min_run_time=min_run_time)
    except Exception as e:
        raise RuntimeError(f"the arm {label!r} raised {type(e).__name__}: {e}") from e
    times = list(m.times)
    return Timing(
        label=label,
        median_s=float(m.median),
        iqr_s=float(m.iqr),
        mean_s=float(m.mean),
        measurements=len(times),
        num_threads=threads,
        device=device.type,
    )


@dataclass(repr=False)
class Comparison:
    """The result of :func:`compare`. ``speedup`` > 1 means the trick is faster."""

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
    ratios: list[float] = field(repr=False, default_factory=list)
    aa_ratios: list[float] = field(repr=False, default_factory=list)

    @property
    def resolved(self) -> bool:
        """True when the data separate the arms (verdict faster or slower)."""
        return self.verdict != UNRESOLVED

    @property
    def time_ratio(self) -> float:
        """Trick time over baseline time (2.0: the trick takes twice as long)."""
        return 1.0 / self.speedup

    def summary(self) -> str:
        """One sentence that claims only what the data show."""
        base, trick = self.names
        lo, hi = self.ci
        if self.verdict == FASTER:
            return f"{trick} is {self.speedup:.2f}× faster than {base} (95 % CI {lo:.2f}–{hi:.2f}×)."
        if self.verdict == SLOWER:
            r_lo, r_hi = 1 / hi, 1 / lo
            return (
                f"{trick} is slower: it takes {self.time_ratio:.2f}× the time of {base} "
                f"(95 % CI {r_lo:.2f}–{r_hi:.2f}×)."
            )
        return (
            f"Not resolvable on this hardware: {trick} vs {base} measured {self.speedup:.2f}× "
            f"[{lo:.2f}, {hi:.2f}], but the A/A control ({base} against itself) gave "
            f"{self.aa_speedup:.2f}× [{self.aa_ci[0]:.2f}, {self.aa_ci[1]:.2f}]."
        )

    def _rows(self) -> list[tuple[str, str, str]]:
        return [
            (name, format_seconds(t), f"{cv * 100:.1f} %")
            for name, t, cv in zip(self.names, self.median_s, self.cv)
        ]

    def _footer(self) -> str:
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        return (
            f"{self.rounds} interleaved rounds × {self.calls_per_round} calls per arm, "
            f"{threads}, {self.device}; speed-up = median of per-round baseline/trick ratios, "
            f"bootstrap 95 % CI"
        )

    def __str__(self) -> str:
        width = max(len(n) for n in self.names) + 2
        lines = [f"{'arm':<{width}}{'median time':>14}{'spread (CV)':>14}"]
        lines += [f"{n:<{width}}{t:>14}{cv:>14}" for n, t, cv in self._rows()]
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
        rows = "".join(
            f"<tr><td>{n}</td><td>{t}</td><td>{cv}</td></tr>" for n, t, cv in self._rows()
        )
        return (
            "<table><thead><tr><th>arm</th><th>median time</th><th>spread (CV)</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
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
        keys = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in keys}
        for k in ("names", "ci", "aa_ci", "median_s", "cv"):
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
            verdict=_verdict(speedup, ci, self.aa_ci),
            median_s=(self.median_s[0] / items[0], self.median_s[1] / items[1]),
            ratios=[x * r for x in self.ratios],
        )

    def plot(self, ax: Any = None) -> Any:
        """Speed-up and A/A control with their intervals."""
        from .plots import plot_comparison

        return plot_comparison(self, ax=ax)


def _verdict(speedup: float, ci: tuple[float, float], aa_ci: tuple[float, float]) -> str:
    # How far the A/A control strays from 1.0 is the noise floor an effect must clear.
    noise = max(abs(math.log(aa_ci[0])), abs(math.log(aa_ci[1])))
    effect = math.log(speedup)
    if ci[0] > 1.0 and effect > noise:
        return FASTER
    if ci[1] < 1.0 and -effect > noise:
        return SLOWER
    return UNRESOLVED


def compare(
    baseline: Callable[[], Any],
    trick: Callable[[], Any],
    *,
    names: tuple[str, str] = ("baseline", "trick"),
    rounds: int = 15,
    warmup: int = 2,
    num_threads: int | None = None,
    min_round_time: float = 0.02,
    max_time: float | None = None,
    device: torch.device | str | None = None,
    seed: int = 0,
    progress: bool | None = None,
) -> Comparison:
    """Compare a baseline and a trick, interleaved, with an A/A control.

    Each round runs three arms in random order: the baseline, the baseline again (the A/A
    control) and the trick, each for the same number of calls. The speed-up is the median over
    rounds of baseline time / trick time, with a bootstrap 95 % interval; the A/A control is the
    same statistic for the baseline against itself. The verdict is "faster" or "slower" only when
    the interval excludes 1.0 and the effect is larger than the A/A control's deviation from 1.0.

    Args:
        baseline: callable taking no arguments, the plain version.
        trick: callable taking no arguments, the version with the trick.
        names: display names of the two arms.
        rounds: interleaved rounds (at least 5).
        warmup: untimed calls of each arm before timing.
        num_threads: torch threads during the comparison (restored afterwards); current if None.
        min_round_time: each arm runs enough calls per round to take about this many seconds.
        max_time: stop after this many seconds of rounds (at least 5 rounds are always run).
        device: the device the arms run on, for synchronisation; :func:`choose_device` if None.
        seed: seed of the arm order and of the bootstrap.
        progress: show a progress bar; by default only when the comparison will take over 5 s.

    Returns:
        A :class:`Comparison` (prints as a table, plots, serialises to JSON).

    Raises:
        TypeError: an arm is not callable (the message names the argument).
        RuntimeError: an arm raised (the message names the arm).
        ValueError: fewer than 5 rounds.
    """
    _check_callable(baseline, "baseline")
    _check_callable(trick, "trick")
    if rounds < 5:
        raise ValueError(f"rounds must be at least 5 for an interval, got {rounds}")
    device = torch.device(device) if device is not None else choose_device()
    base_name, trick_name = names
    arms: dict[str, tuple[Callable[[], Any], str]] = {
        "A": (baseline, base_name),
        "A2": (baseline, base_name),
        "B": (trick, trick_name),
    }
    rng = random.Random(seed)
    with _threads(num_threads) as threads:
        for _ in range(max(warmup, 1)):
            for fn, name in (arms["A"], arms["B"]):
                _time_calls(fn, name, 1, device)
        single = max(_time_calls(fn, name, 1, device) for fn, name in (arms["A"], arms["B"]))
        calls = max(1, math.ceil(min_round_time / max(single, 1e-9)))
        expected = rounds * 3 * calls * single
        if max_time is not None:
            expected = min(expected, max_time)
        show = progress if progress is not None else expected > 5.0
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=rounds, desc=f"compare {trick_name} vs {base_name}", leave=False)
        times: dict[str, list[float]] = {k: [] for k in arms}
        start = time.perf_counter()
        try:
            for r in range(rounds):
                order = list(arms)
                rng.shuffle(order)
                for key in order:
                    fn, name = arms[key]
                    times[key].append(_time_calls(fn, name, calls, device))
                if bar is not None:
                    bar.update(1)
                if max_time is not None and r >= 4 and time.perf_counter() - start > max_time:
                    break
        finally:
            if bar is not None:
                bar.close()
    a, a2, b = (np.asarray(times[k]) for k in ("A", "A2", "B"))
    ratios = (a / b).tolist()
    aa_ratios = (a / a2).tolist()
    ci = bootstrap_ci(ratios, seed=seed)
    aa_ci = bootstrap_ci(aa_ratios, seed=seed + 1)
    speedup = float(np.median(ratios))
    base_all = np.concatenate([a, a2])
    return Comparison(
        names=(base_name, trick_name),
        speedup=speedup,
        ci=ci,
        aa_speedup=float(np.median(aa_ratios)),
        aa_ci=aa_ci,
        verdict=_verdict(speedup, ci, aa_ci),
        median_s=(float(np.median(base_all)), float(np.median(b))),
        cv=(float(base_all.std() / base_all.mean()), float(b.std() / b.mean())),
        rounds=len(ratios),
        calls_per_round=calls,
        num_threads=threads,
        device=device.type,
        ratios=ratios,
        aa_ratios=aa_ratios,
    )


def naive_compare(
    baseline: Callable[[], Any],
    trick: Callable[[], Any],
    *,
    calls: int = 1,
    sync: bool = False,
    device: torch.device | str | None = None,
) -> float:
    """The way *not* to compare, kept for lesson 00: time the baseline, then the trick, once each.

    No warm-up, no interleaving, no control and, unless ``sync`` is set, no device
    synchronisation, so on a GPU the clock stops before the work is done. Returns the apparent
    speed-up (baseline seconds / trick seconds). Call it a few times on the same function to see
    how much it lies; use :func:`compare` for real measurements.
    """
    _check_callable(baseline, "baseline")
    _check_callable(trick, "trick")
    device = torch.device(device) if device is not None else choose_device()
    seconds = []
    for fn, name in ((baseline, "baseline"), (trick, "trick")):
        t0 = time.perf_counter()
        for _ in range(calls):
            _call(fn, name)
        if sync:
            synchronize(device)
        seconds.append(time.perf_counter() - t0)
    return seconds[0] / seconds[1]

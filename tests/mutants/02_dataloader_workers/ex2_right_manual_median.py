# A correct alternative: the median by hand from a sorted copy, validation with math.isfinite on each value.
import math


def _median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def best_num_workers(times, tolerance=0.05):
    if tolerance < 0 or math.isnan(tolerance):
        raise ValueError("tolerance must be a number >= 0")
    if len(times) == 0:
        raise ValueError("no worker counts")
    medians = []
    for w, t in times.items():
        if w < 0:
            raise ValueError(f"negative worker count {w}")
        if len(t) == 0:
            raise ValueError(f"{w} workers without times")
        for x in t:
            if not (math.isfinite(x) and x > 0):
                raise ValueError(f"{w} workers: {x} is not a positive finite time")
        medians.append((w, _median(t)))
    fastest = min(m for _, m in medians)
    return min(w for w, m in medians if m <= fastest * (1 + tolerance))

# kind: validation
# why: checks only each count's median, so a negative or infinite time away from the middle passes
# fails-with: should raise ValueError
import math
import statistics


def best_num_workers(times, tolerance=0.05):
    if not times:
        raise ValueError("no worker counts")
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    medians = {}
    for w, t in times.items():
        if w < 0 or len(t) == 0:
            raise ValueError(f"bad entry for {w} workers")
        m = statistics.median(t)
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"{w} workers: the median time {m} is not a positive number")
        medians[w] = m
    fastest = min(medians.values())
    return min(w for w, m in medians.items() if m <= fastest * (1 + tolerance))

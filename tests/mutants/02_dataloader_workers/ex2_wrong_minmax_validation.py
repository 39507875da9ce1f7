# kind: validation
# why: checks min(t) > 0 and max(t) finite, but min and max skip a NaN in the middle of the list
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
        if not (min(t) > 0 and math.isfinite(max(t))):
            raise ValueError(f"{w} workers: times must be positive and finite")
        medians[w] = statistics.median(t)
    fastest = min(medians.values())
    return min(w for w, m in medians.items() if m <= fastest * (1 + tolerance))

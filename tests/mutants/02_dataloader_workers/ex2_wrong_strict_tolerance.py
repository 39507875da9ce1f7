# kind: logic
# why: a time exactly at (1 + tolerance) x the fastest median is counted as outside (< instead of <=)
# fails-with: is within
import math
import statistics


def best_num_workers(times, tolerance=0.05):
    if not times:
        raise ValueError("no worker counts")
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    medians = {}
    for w, t in times.items():
        if w < 0 or len(t) == 0 or not all(math.isfinite(x) and x > 0 for x in t):
            raise ValueError(f"bad entry for {w} workers")
        medians[w] = statistics.median(t)
    fastest = min(medians.values())
    return min(w for w, m in medians.items() if m < fastest * (1 + tolerance) or m == fastest)

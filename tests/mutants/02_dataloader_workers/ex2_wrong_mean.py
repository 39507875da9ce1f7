# kind: logic
# why: compares the mean epoch times, so one disturbed round decides
# fails-with: median, not the mean
import math


def best_num_workers(times, tolerance=0.05):
    if not times:
        raise ValueError("no worker counts")
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    means = {}
    for w, t in times.items():
        if w < 0 or len(t) == 0 or not all(math.isfinite(x) and x > 0 for x in t):
            raise ValueError(f"bad entry for {w} workers")
        means[w] = sum(t) / len(t)
    fastest = min(means.values())
    return min(w for w, m in means.items() if m <= fastest * (1 + tolerance))

# kind: inputs
# why: takes sorted(t)[len(t) // 2] as the median, right for odd numbers of rounds only
# fails-with: two middle values
import math


def best_num_workers(times, tolerance=0.05):
    if not times:
        raise ValueError("no worker counts")
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    medians = {}
    for w, t in times.items():
        if w < 0 or len(t) == 0 or not all(math.isfinite(x) and x > 0 for x in t):
            raise ValueError(f"bad entry for {w} workers")
        medians[w] = sorted(t)[len(t) // 2]
    fastest = min(medians.values())
    return min(w for w, m in medians.items() if m <= fastest * (1 + tolerance))

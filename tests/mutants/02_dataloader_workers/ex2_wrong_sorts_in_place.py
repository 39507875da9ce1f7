# kind: state
# why: sorts each list of times in place to find its median, changing the caller's data
# fails-with: changed .times.
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
        if isinstance(t, tuple):
            t = list(t)
        t.sort()
        n = len(t)
        medians[w] = t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2
    fastest = min(medians.values())
    return min(w for w, m in medians.items() if m <= fastest * (1 + tolerance))

# A correct alternative: NumPy arrays, np.median, every value checked at once, the counts walked in order.
import numpy as np


def best_num_workers(times, tolerance=0.05):
    if len(times) == 0:
        raise ValueError("times is empty")
    if not (tolerance >= 0):
        raise ValueError(f"tolerance {tolerance} must be >= 0")
    medians = {}
    for workers in sorted(times):
        values = np.asarray(times[workers], dtype=float)
        if workers < 0 or values.size == 0 or not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(f"{workers} workers: a worker count >= 0 with positive finite times is needed")
        medians[workers] = float(np.median(values))
    limit = min(medians.values()) * (1 + tolerance)
    return next(w for w in sorted(medians) if medians[w] <= limit)

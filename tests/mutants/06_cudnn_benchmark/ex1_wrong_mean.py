# kind: logic
# why: the mean of the second half instead of its median: one late spike drags it up
# fails-with: median
def warmup_end(times, tol: float = 0.25) -> int:
    values = [float(t) for t in times]
    if len(values) < 2:
        raise ValueError("need at least 2 step times")
    if not all(math.isfinite(t) and t > 0 for t in values):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    steady = statistics.mean(values[len(values) // 2:])
    for i, t in enumerate(values):
        if t <= (1 + tol) * steady:
            return i
    return 0

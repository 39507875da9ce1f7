# kind: logic
# why: the steady time is the median of every step, so a long warm-up drags it up
# fails-with: median of the second half
def warmup_end(times, tol: float = 0.25) -> int:
    values = [float(t) for t in times]
    if len(values) < 2:
        raise ValueError("need at least 2 step times")
    if not all(math.isfinite(t) and t > 0 for t in values):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    steady = statistics.median(values)
    for i, t in enumerate(values):
        if t <= (1 + tol) * steady:
            return i
    return len(values) - 1

# kind: validation
# why: only the times the median is taken from are checked; a zero, negative or infinite warm-up time passes
# fails-with: raise ValueError
def warmup_end(times, tol: float = 0.25) -> int:
    values = [float(t) for t in times]
    if len(values) < 2:
        raise ValueError("need at least 2 step times")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    second = values[len(values) // 2:]
    if not all(math.isfinite(t) and t > 0 for t in second):
        raise ValueError("every step time must be a finite number > 0")
    limit = (1 + tol) * statistics.median(second)
    return next(i for i, t in enumerate(values) if t <= limit)

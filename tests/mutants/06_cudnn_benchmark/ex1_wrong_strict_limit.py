# kind: logic
# why: < instead of <= at the limit: a step exactly at (1 + tol) x median is not counted as steady
# fails-with: limit|expected index
def warmup_end(times, tol: float = 0.25) -> int:
    values = [float(t) for t in times]
    if len(values) < 2:
        raise ValueError("need at least 2 step times")
    if not all(math.isfinite(t) and t > 0 for t in values):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    limit = (1 + tol) * statistics.median(values[len(values) // 2:])
    return next((i for i, t in enumerate(values) if t < limit), len(values) // 2)

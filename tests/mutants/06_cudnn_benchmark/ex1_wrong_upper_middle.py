# kind: inputs
# why: the middle element of the sorted second half: right for odd counts, the upper middle value for even ones
def warmup_end(times, tol: float = 0.25) -> int:
    values = [float(t) for t in times]
    if len(values) < 2:
        raise ValueError("need at least 2 step times")
    if not all(math.isfinite(t) and t > 0 for t in values):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    second = sorted(values[len(values) // 2:])
    steady = second[len(second) // 2]
    for i, t in enumerate(values):
        if t <= (1 + tol) * steady:
            return i
    return 0

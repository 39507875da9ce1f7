def warmup_end(times, tol: float = 0.25) -> int:
    n = len(times)
    if n < 2 or tol < 0:
        raise ValueError("need at least 2 step times and tol >= 0")
    for t in times:
        if not (0 < t < float("inf")):  # False for NaN too
            raise ValueError(f"bad step time {t!r}")
    half = sorted(times[n // 2:])
    m = len(half)
    median = half[m // 2] if m % 2 else (half[m // 2 - 1] + half[m // 2]) / 2
    i = 0
    while times[i] > (1 + tol) * median:
        i += 1
    return i

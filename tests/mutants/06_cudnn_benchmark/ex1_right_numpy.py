def warmup_end(times, tol: float = 0.25) -> int:
    values = np.array(times, dtype=np.float64)  # a copy: the caller's sequence is never touched
    if values.ndim != 1 or values.size < 2:
        raise ValueError("need at least 2 step times")
    if not np.isfinite(values).all() or (values <= 0).any():
        raise ValueError("every step time must be a finite number > 0")
    if not tol >= 0:
        raise ValueError("tol must be >= 0")
    limit = (1 + tol) * np.median(values[values.size // 2:])
    return int(np.flatnonzero(values <= limit)[0])

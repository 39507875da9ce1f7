# kind: state
# why: sorts the second half in place through a NumPy view, so the caller's array comes back reordered
# fails-with: input .*changed
def warmup_end(times, tol: float = 0.25) -> int:
    values = np.asarray(times, dtype=np.float64)  # no copy when times is already a float64 array
    n = len(values)
    if n < 2:
        raise ValueError("need at least 2 step times")
    if not (np.isfinite(values).all() and (values > 0).all()):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    half = values[n // 2:]
    half.sort()
    m = len(half)
    median = half[m // 2] if m % 2 else (half[m // 2 - 1] + half[m // 2]) / 2
    return next(i for i, t in enumerate(times) if t <= (1 + tol) * median)

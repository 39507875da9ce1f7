# kind: dtype
# why: np.argmax returns a NumPy integer, not the int the spec asks for
# fails-with: plain int
def warmup_end(times, tol: float = 0.25) -> int:
    values = np.asarray(times, dtype=float)
    if values.size < 2:
        raise ValueError("need at least 2 step times")
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError("every step time must be a finite number > 0")
    if tol < 0:
        raise ValueError("tol must be >= 0")
    steady = np.median(values[len(values) // 2:])
    return np.argmax(values <= (1 + tol) * steady)

# kind: state
# why: sorts the caller's list (or NumPy array) in place instead of a copy
# fails-with: in place
def median_interval(values, level=0.95):
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    if any(math.isnan(v) for v in values):
        raise ValueError("NaN among the values")
    values.sort()
    n = len(values)

    def coverage(k):
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0**n

    if n == 0 or coverage(1) < level:
        raise ValueError(f"{n} values are too few for a {level:.0%} interval")
    k = 1
    while coverage(k + 1) >= level:
        k += 1
    return float(values[k - 1]), float(values[n - k])

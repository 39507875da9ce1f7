# kind: dtype
# why: returns the values as they came: integers in, integers out, where the spec asks for floats
# fails-with: float
def median_interval(values, level=0.95):
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    x = sorted(values)
    if any(v != v for v in x):
        raise ValueError("NaN among the values")
    n = len(x)

    def coverage(k):
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0**n

    if n == 0 or coverage(1) < level:
        raise ValueError(f"{n} values are too few for a {level:.0%} interval")
    k = 1
    while coverage(k + 1) >= level:
        k += 1
    return x[k - 1], x[n - k]

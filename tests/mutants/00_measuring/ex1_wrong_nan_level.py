# kind: validation
# why: `level <= 0 or level >= 1` lets a NaN level through (every comparison with NaN is False)
# fails-with: nan
def median_interval(values, level=0.95):
    if level <= 0 or level >= 1:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    x = sorted(float(v) for v in values)
    n = len(x)

    def coverage(k):
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0**n

    if n == 0 or coverage(1) < level:
        raise ValueError(f"{n} values are too few for a {level:.0%} interval")
    k = 1
    while coverage(k + 1) >= level:
        k += 1
    return x[k - 1], x[n - k]

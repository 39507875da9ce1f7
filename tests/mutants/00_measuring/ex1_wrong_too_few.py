# kind: validation
# why: raises only for an empty list; with too few values it returns [min, max] although that misses the level
# fails-with: too few|ValueError
def median_interval(values, level=0.95):
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    x = sorted(float(v) for v in values)
    n = len(x)
    if n == 0:
        raise ValueError("no values")

    def coverage(k):
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0**n

    k = 1
    while coverage(k + 1) >= level:
        k += 1
    return x[k - 1], x[n - k]

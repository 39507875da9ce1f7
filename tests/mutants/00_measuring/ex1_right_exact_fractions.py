# A correct alternative: exact rational arithmetic and one running binomial sum, scanning k upward.
from fractions import Fraction


def median_interval(values, level=0.95):
    level = float(level)
    if not (level > 0.0 and level < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1, not {level}")
    x = [float(v) for v in values]
    if any(v != v for v in x):
        raise ValueError("a value is NaN")
    x = sorted(x)
    n = len(x)
    target, total = Fraction(level), 2 ** n
    best, tail = 0, 0  # tail = P(B <= k-1) * 2**n, B ~ Binomial(n, 1/2)
    for k in range(1, n + 1):
        tail += math.comb(n, k - 1)
        if 1 - 2 * Fraction(tail, total) < target:  # [x(k), x(n-k+1)] no longer covers enough
            break
        best = k
    if best == 0:
        raise ValueError(f"too few values ({n}) for level {level}")
    return x[best - 1], x[-best]

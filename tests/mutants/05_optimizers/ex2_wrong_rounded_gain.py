# kind: dtype
# why: rounds the interval's low end to two decimals before comparing: 1.046 counts as 1.05
# fails-with: min_gain|expected
def choose_implementation(sweep, min_gain=1.0):
    chosen, best = sweep.baseline, None
    for name, c in sweep.comparisons.items():
        if c.verdict == "faster" and round(c.ci[0], 2) >= min_gain and (best is None or c.speedup > best):
            chosen, best = name, c.speedup
    return chosen

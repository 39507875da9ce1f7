# kind: validation
# why: compares min_gain with the point speed-up instead of the interval's low end
# fails-with: min_gain
def choose_implementation(sweep, min_gain=1.0):
    chosen, best = sweep.baseline, None
    for name, c in sweep.comparisons.items():
        if c.verdict == "faster" and c.speedup >= min_gain and (best is None or c.speedup > best):
            chosen, best = name, c.speedup
    return chosen

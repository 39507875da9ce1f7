# kind: logic
# why: the largest point speed-up whose interval clears min_gain, whatever its verdict: an arm whose control failed can win
# fails-with: verdict
def choose_implementation(sweep, min_gain=1.0):
    best, best_speedup = sweep.baseline, 1.0
    for name, c in sweep.comparisons.items():
        if c.ci[0] >= min_gain and c.speedup > best_speedup:
            best, best_speedup = name, c.speedup
    return best

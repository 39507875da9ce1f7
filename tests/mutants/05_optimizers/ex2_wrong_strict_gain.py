# kind: logic
# why: ci[0] > min_gain: an interval that starts exactly at min_gain does not qualify
# fails-with: min_gain|at least
def choose_implementation(sweep, min_gain=1.0):
    qualifying = [n for n, c in sweep.comparisons.items() if c.verdict == "faster" and c.ci[0] > min_gain]
    return max(qualifying, key=lambda n: sweep.comparisons[n].speedup) if qualifying else sweep.baseline

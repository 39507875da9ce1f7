# kind: logic
# why: >= when comparing speed-ups, so a tie goes to the arm listed last
# fails-with: tie
def choose_implementation(sweep, min_gain=1.0):
    chosen, best = sweep.baseline, float("-inf")
    for name, c in sweep.comparisons.items():
        if c.verdict == "faster" and c.ci[0] >= min_gain and c.speedup >= best:
            chosen, best = name, c.speedup
    return chosen

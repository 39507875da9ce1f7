# kind: inputs
# why: returns the lesson's baseline name when nothing qualifies, right only for sweeps whose baseline is the for-loop
# fails-with: expected
def choose_implementation(sweep, min_gain=1.0):
    qualifying = [n for n, c in sweep.comparisons.items() if c.verdict == "faster" and c.ci[0] >= min_gain]
    if not qualifying:
        return "for-loop (foreach=False)"
    return max(qualifying, key=lambda n: sweep.comparisons[n].speedup)

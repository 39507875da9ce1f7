# kind: logic
# why: returns None when no arm qualifies instead of the baseline's name
# fails-with: str|baseline
def choose_implementation(sweep, min_gain=1.0):
    qualifying = {n: c.speedup for n, c in sweep.comparisons.items() if c.verdict == "faster" and c.ci[0] >= min_gain}
    return max(qualifying, key=qualifying.get) if qualifying else None

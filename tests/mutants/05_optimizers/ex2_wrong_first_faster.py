# kind: logic
# why: returns the first qualifying arm in the sweep's order, not the one with the largest speed-up
# fails-with: larger speed-up
def choose_implementation(sweep, min_gain=1.0):
    for name, c in sweep.comparisons.items():
        if c.verdict == "faster" and c.ci[0] >= min_gain:
            return name
    return sweep.baseline

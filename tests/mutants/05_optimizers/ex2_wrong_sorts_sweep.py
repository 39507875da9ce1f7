# kind: state
# why: reorders the sweep's comparisons in place (fastest first) to pick the first: the caller's sweep is changed
# fails-with: changed
def choose_implementation(sweep, min_gain=1.0):
    sweep.comparisons = dict(sorted(sweep.comparisons.items(), key=lambda kv: -kv[1].speedup))
    for name, c in sweep.comparisons.items():
        if c.verdict == "faster" and c.ci[0] >= min_gain:
            return name
    return sweep.baseline

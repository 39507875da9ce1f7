# max() keeps the first of equal keys; the verdict read through by_verdict's group, min_gain on the low end.
def choose_implementation(sweep, min_gain=1.0):
    faster = set(sweep.by_verdict()["faster"])
    qualifying = [name for name, c in sweep.comparisons.items() if name in faster and c.ci[0] >= min_gain]
    return max(qualifying, key=lambda name: sweep[name].speedup, default=sweep.baseline)

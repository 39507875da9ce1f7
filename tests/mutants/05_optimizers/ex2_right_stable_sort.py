# A stable sort on the speed-up, descending (ties keep their order), then the first that qualifies.
def choose_implementation(sweep, min_gain=1.0):
    arms = sorted(sweep.comparisons.items(), key=lambda item: item[1].speedup, reverse=True)
    for name, comparison in arms:
        low, _high = comparison.ci
        if comparison.verdict == cu.measure.stats.FASTER and low >= min_gain:
            return str(name)
    return sweep.baseline

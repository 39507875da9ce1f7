# kind: structure
# why: sweep.best() is the fastest "faster" arm but ignores min_gain
# fails-with: min_gain
def choose_implementation(sweep, min_gain=1.0):
    return sweep.best()

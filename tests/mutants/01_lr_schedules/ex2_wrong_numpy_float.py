# kind: dtype
# why: returns lrs[i] as it is: from a NumPy array that is a numpy.float64, not the Python float asked for
# fails-with: Python float
import numpy as np


def suggest_lr(lrs, losses):
    i_min = int(np.argmin(losses))
    if i_min == 0:
        return lrs[0]
    slopes = np.diff(losses[: i_min + 1]) / np.diff(np.log(lrs[: i_min + 1]))
    return lrs[int(np.argmin(slopes))]

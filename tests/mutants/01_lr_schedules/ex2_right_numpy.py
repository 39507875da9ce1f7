# A correct alternative: NumPy throughout (np.argmin returns the first of equal values), a Python float out.
import numpy as np


def suggest_lr(lrs, losses):
    lrs, losses = np.asarray(lrs, dtype=float), np.asarray(losses, dtype=float)
    i_min = int(np.argmin(losses))
    if i_min == 0:
        return float(lrs[0])
    slopes = np.diff(losses[: i_min + 1]) / np.diff(np.log(lrs[: i_min + 1]))
    return float(lrs[int(np.argmin(slopes))])

# kind: logic
# why: returns the LR at the end of the steepest segment (lrs[i + 1]) instead of its start
import math


def suggest_lr(lrs, losses):
    i_min = min(range(len(losses)), key=lambda i: losses[i])
    if i_min == 0:
        return float(lrs[0])
    slopes = [(losses[i + 1] - losses[i]) / (math.log(lrs[i + 1]) - math.log(lrs[i])) for i in range(i_min)]
    return float(lrs[min(range(i_min), key=lambda i: slopes[i]) + 1])

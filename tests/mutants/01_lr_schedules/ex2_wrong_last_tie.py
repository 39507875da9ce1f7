# kind: logic
# why: keeps the last of equally steep slopes (<= while scanning), not the first
# fails-with: equally steep
import math


def suggest_lr(lrs, losses):
    i_min = losses.index(min(losses))
    best, steepest = 0, math.inf
    for i in range(i_min):
        slope = (losses[i + 1] - losses[i]) / (math.log(lrs[i + 1]) - math.log(lrs[i]))
        if slope <= steepest:
            best, steepest = i, slope
    return float(lrs[best])

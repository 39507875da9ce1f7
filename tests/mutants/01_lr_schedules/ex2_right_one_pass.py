# A correct alternative: one pass, log of the ratio, the running minimum and the steepest slope before it.
import math


def suggest_lr(lrs, losses):
    lrs, losses = list(lrs), list(losses)
    best_i = 0
    lowest = losses[0]
    steepest_i, steepest = 0, math.inf
    for i in range(1, len(losses)):
        slope = (losses[i] - losses[i - 1]) / math.log(lrs[i] / lrs[i - 1])
        if slope < steepest:
            steepest_i, steepest = i - 1, slope
        if losses[i] < lowest:  # a new first minimum: every segment up to here counts
            lowest, best_i = losses[i], steepest_i
    return float(lrs[best_i])

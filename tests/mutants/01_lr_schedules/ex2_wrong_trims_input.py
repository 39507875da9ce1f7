# kind: state
# why: cuts the caller's lists at the minimum in place (del) before computing the slopes
# fails-with: changed its input
import math


def suggest_lr(lrs, losses):
    i_min = losses.index(min(losses))
    del lrs[i_min + 1:], losses[i_min + 1:]
    if i_min == 0:
        return float(lrs[0])
    slopes = [(b - a) / (math.log(y) - math.log(x)) for a, b, x, y in zip(losses, losses[1:], lrs, lrs[1:])]
    return float(lrs[slopes.index(min(slopes))])

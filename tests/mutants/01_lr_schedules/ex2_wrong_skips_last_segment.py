# kind: logic
# why: an off-by-one: the segment that ends at the minimum itself is left out
import math


def suggest_lr(lrs, losses):
    i_min = min(range(len(losses)), key=lambda i: losses[i])
    if i_min <= 1:
        return float(lrs[0])
    slopes = [(losses[i + 1] - losses[i]) / (math.log(lrs[i + 1]) - math.log(lrs[i])) for i in range(i_min - 1)]
    return float(lrs[min(range(i_min - 1), key=lambda i: slopes[i])])

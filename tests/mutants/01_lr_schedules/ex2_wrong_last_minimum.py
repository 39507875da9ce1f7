# kind: logic
# why: takes the last of several equal lowest losses, not the first, so a later descent counts too
# fails-with: first occurrence
import math


def suggest_lr(lrs, losses):
    lowest = min(losses)
    i_min = max(i for i, v in enumerate(losses) if v == lowest)
    if i_min == 0:
        return float(lrs[0])
    slopes = [(losses[i + 1] - losses[i]) / (math.log(lrs[i + 1]) - math.log(lrs[i])) for i in range(i_min)]
    return float(lrs[slopes.index(min(slopes))])

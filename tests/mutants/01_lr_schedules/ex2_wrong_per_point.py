# kind: logic
# why: takes the slope per point (the largest drop between neighbours), not per unit of log-LR
# fails-with: per unit of log-LR
def suggest_lr(lrs, losses):
    i_min = min(range(len(losses)), key=lambda i: losses[i])
    if i_min == 0:
        return float(lrs[0])
    drops = [losses[i + 1] - losses[i] for i in range(i_min)]
    return float(lrs[min(range(i_min), key=lambda i: drops[i])])

# kind: logic
# why: ends phase 2 at total_steps instead of total_steps - 1, so the last step never reaches min_lr
import math


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    initial_lr = max_lr / div_factor
    min_lr = initial_lr / final_div_factor
    warmup_end = float(pct_start * total_steps) - 1
    if step <= warmup_end:
        a, b, start, end = 0.0, warmup_end, initial_lr, max_lr
    else:
        a, b, start, end = warmup_end, total_steps, max_lr, min_lr
    pct = (step - a) / (b - a)
    return float(end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1))

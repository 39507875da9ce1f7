# kind: dtype
# why: returns max_lr as given at the peak step, so an integer max_lr comes back as an int, not a float
# fails-with: Python float
import math


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    initial_lr = max_lr / div_factor
    min_lr = initial_lr / final_div_factor
    warmup_end = pct_start * total_steps - 1
    if step == warmup_end:
        return max_lr
    if step < warmup_end:
        a, b, start, end = 0.0, warmup_end, initial_lr, max_lr
    else:
        a, b, start, end = warmup_end, total_steps - 1, max_lr, min_lr
    pct = (step - a) / (b - a)
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

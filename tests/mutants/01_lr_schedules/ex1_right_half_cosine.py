# A correct alternative: one interpolation helper, written as start + (end - start) * (1 - cos) / 2.
from math import cos, pi


def _cosine_between(start, end, fraction):
    return start + (end - start) * (1.0 - cos(pi * fraction)) / 2.0


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    lr0 = max_lr / div_factor
    lr_end = lr0 / final_div_factor
    peak_step = pct_start * total_steps - 1.0
    if step <= peak_step:
        return float(_cosine_between(lr0, max_lr, step / peak_step))
    return float(_cosine_between(max_lr, lr_end, (step - peak_step) / (total_steps - 1 - peak_step)))

# kind: dtype
# why: computes the cosine in a float32 tensor, off by about 1e-7 relative from PyTorch's float64 arithmetic
import math

import torch


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    initial_lr = max_lr / div_factor
    min_lr = initial_lr / final_div_factor
    warmup_end = pct_start * total_steps - 1
    if step <= warmup_end:
        a, b, start, end = 0.0, warmup_end, initial_lr, max_lr
    else:
        a, b, start, end = warmup_end, total_steps - 1, max_lr, min_lr
    pct = torch.tensor((step - a) / (b - a))
    return (end + (start - end) / 2 * (torch.cos(math.pi * pct) + 1)).item()

# kind: spy
# why: borrows OneCycleLR's own cosine (OneCycleLR._annealing_cos) instead of writing the formula
# fails-with: uses OneCycleLR
import torch

_cos = torch.optim.lr_scheduler.OneCycleLR._annealing_cos


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    initial_lr = max_lr / div_factor
    min_lr = initial_lr / final_div_factor
    warmup_end = float(pct_start * total_steps) - 1
    if step <= warmup_end:
        return float(_cos(initial_lr, max_lr, step / warmup_end))
    return float(_cos(max_lr, min_lr, (step - warmup_end) / (total_steps - 1 - warmup_end)))

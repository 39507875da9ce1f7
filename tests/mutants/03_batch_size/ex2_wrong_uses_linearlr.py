# kind: spy
# why: reads the factor from a LinearLR scheduler stepped to `step` instead of writing the formula
# fails-with: scheduler
import math

import torch


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    factors = {"none": 1.0, "linear": batch / base_batch, "sqrt": math.sqrt(batch / base_batch)}
    if rule not in factors:
        raise ValueError(f"unknown rule {rule!r}")
    return float(base_lr * factors[rule])


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / warmup_steps, total_iters=warmup_steps - 1)
    for _ in range(min(step, warmup_steps)):
        opt.step()
        sched.step()
    return float(opt.param_groups[0]["lr"])

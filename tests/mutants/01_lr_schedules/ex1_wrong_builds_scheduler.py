# kind: spy
# why: builds a OneCycleLR on a dummy optimizer and steps it to `step` instead of implementing the formula
# fails-with: uses OneCycleLR
import torch


def one_cycle_lr(step, total_steps, max_lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=max_lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=total_steps, pct_start=pct_start,
                                                div_factor=div_factor, final_div_factor=final_div_factor,
                                                cycle_momentum=False)
    for _ in range(step):
        opt.step()
        sched.step()
    return float(opt.param_groups[0]["lr"])

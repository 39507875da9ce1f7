# Per group, the whole update with torch._foreach_* ops on lists; the step count as a host-held 0-d float tensor
# (as torch keeps it), its value read with .item() from the CPU.
import math

import torch


class MyAdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            for p in params:
                if len(self.state[p]) == 0:
                    self.state[p]["step"] = torch.tensor(0.0)
                    self.state[p]["exp_avg"] = torch.zeros_like(p)
                    self.state[p]["exp_avg_sq"] = torch.zeros_like(p)
            grads = [p.grad for p in params]
            m = [self.state[p]["exp_avg"] for p in params]
            v = [self.state[p]["exp_avg_sq"] for p in params]
            for p in params:
                self.state[p]["step"] += 1
            torch._foreach_mul_(params, 1 - lr * wd)
            torch._foreach_lerp_(m, grads, 1 - beta1)
            torch._foreach_mul_(v, beta2)
            torch._foreach_addcmul_(v, grads, grads, 1 - beta2)
            for p, mi, vi in zip(params, m, v):
                t = self.state[p]["step"].item()
                bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
                denom = vi.div(bc2).sqrt_().add_(eps) if False else (vi.sqrt() / math.sqrt(bc2)).add_(eps)
                p.addcdiv_(mi, denom, value=-lr / bc1)
        return loss

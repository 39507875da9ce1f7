# kind: dtype
# why: sums the squares of the gradients in their own dtype: in float16, gradients in the hundreds square past 65504 and the norm becomes inf
# fails-with: float16
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    if math.isinf(norm_type):
        total = torch.stack([g.abs().max() for g in grads]).max()
    else:
        total = torch.stack([g.abs().pow(norm_type).sum() for g in grads]).sum().pow(1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total

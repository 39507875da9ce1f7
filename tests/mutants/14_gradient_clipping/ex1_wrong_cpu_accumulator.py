# kind: device
# why: accumulates the sum of squares in a tensor made without device=, on the CPU, so gradients on a GPU fail or the norm comes back on the CPU
# fails-with: device|meta
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.zeros(())  # the running sum of |g|^p over all gradients
    if math.isinf(norm_type):
        for g in grads:
            total = torch.maximum(total, g.detach().abs().max().float())
    else:
        for g in grads:
            total += torch.linalg.vector_norm(g, norm_type).float() ** norm_type
        total = total ** (1.0 / norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total

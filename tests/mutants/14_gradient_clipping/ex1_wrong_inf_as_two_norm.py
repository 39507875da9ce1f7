# kind: logic
# why: treats every norm_type as a power sum, so norm_type=inf gives inf ** 0 and a wrong total instead of the largest |gradient|
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, 2.0) for g in grads]), 2.0)         if math.isinf(norm_type) else         torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total

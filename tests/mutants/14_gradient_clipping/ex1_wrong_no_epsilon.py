# kind: logic
# why: divides by the total norm without the 1e-6 that torch adds, so the factor is off for small norms (and zero gradients become NaN)
# fails-with: 1e-6
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])
    total = norms.max() if math.isinf(norm_type) else torch.linalg.vector_norm(norms, norm_type)
    coef = torch.clamp(max_norm / total, max=1.0).nan_to_num(1.0)  # 0 / 0 -> NaN: keep zero gradients as they are
    for g in grads:
        g.mul_(coef)
    return total

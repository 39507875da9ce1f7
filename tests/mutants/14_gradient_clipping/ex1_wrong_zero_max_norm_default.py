# kind: structure
# why: reads max_norm=0.0 as "no limit given" (max_norm or inf), so gradients that should all be zeroed are left as they are
# fails-with: max_norm=0
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    max_norm = max_norm or math.inf
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])
    total = norms.max() if math.isinf(norm_type) else torch.linalg.vector_norm(norms, norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    return total

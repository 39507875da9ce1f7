# kind: structure
# why: assigns p.grad = p.grad * coef (a new tensor) instead of scaling the gradient in place, so anything holding the old gradient tensor (an optimizer, a DDP bucket view) is not clipped
# fails-with: in place
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    params = [p for p in params if p.grad is not None]
    if not params:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(p.grad, norm_type) for p in params])
    total = norms.max() if math.isinf(norm_type) else torch.linalg.vector_norm(norms, norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for p in params:
        p.grad = p.grad * coef
    return total

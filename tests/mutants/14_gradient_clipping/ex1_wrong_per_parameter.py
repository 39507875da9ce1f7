# kind: logic
# why: clips each parameter by its own norm instead of one total norm over all of them
# fails-with: same factor|total norm
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
    for g, n in zip(grads, norms):
        g.mul_(torch.clamp(max_norm / (n + 1e-6), max=1.0))
    return total

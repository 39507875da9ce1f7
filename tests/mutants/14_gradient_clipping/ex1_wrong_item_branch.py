# kind: work
# why: decides in Python whether to clip (if total > max_norm), which reads the norm on the host: a sync every step on a GPU
# fails-with: host|sync
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
    if total > max_norm:
        for g in grads:
            g.mul_(max_norm / (total + 1e-6))
    return total

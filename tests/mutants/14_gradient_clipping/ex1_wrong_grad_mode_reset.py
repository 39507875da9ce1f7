# kind: state
# why: switches grad mode off for the clipping and back on at the end, so a caller that had it off (validation, torch.no_grad()) gets it on
# fails-with: grad mode
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    torch.set_grad_enabled(False)  # clipping must not be recorded by autograd
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        torch.set_grad_enabled(True)
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])
    total = norms.max() if math.isinf(norm_type) else torch.linalg.vector_norm(norms, norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)
    torch.set_grad_enabled(True)
    return total

import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    # torch's own recipe with the foreach kernels: one norm per gradient, one scale for all
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norm_type = float(norm_type)
    norms = torch._foreach_norm(grads, norm_type)
    total = torch.linalg.vector_norm(torch.stack([n.to(grads[0].device) for n in norms]), norm_type)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, coef.to(grads[0].device, grads[0].dtype) if grads[0].dtype == coef.dtype else coef)
    return total

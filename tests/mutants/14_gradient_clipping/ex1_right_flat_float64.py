import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    # one flat float64 vector of all gradients: no overflow or rounding in the norm, then the same factor for all
    if isinstance(parameters, torch.Tensor):
        parameters = (parameters,)
    grads = [p.grad for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return torch.zeros(())
    flat = torch.cat([g.detach().reshape(-1).to(torch.float64) for g in grads])
    total = torch.linalg.vector_norm(flat, ord=norm_type)
    scale = torch.minimum(torch.ones_like(total), max_norm / (total + 1e-6))
    with torch.no_grad():
        for g in grads:
            g.mul_(scale.to(dtype=g.dtype))
    return total.to(grads[0].dtype)

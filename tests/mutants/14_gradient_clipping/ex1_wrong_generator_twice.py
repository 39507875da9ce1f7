# kind: inputs
# why: walks the parameters twice (once for the norm, once to scale), so a generator is empty the second time and nothing is clipped
# fails-with: generator
import math
from collections.abc import Iterable

import torch


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    norms = [torch.linalg.vector_norm(p.grad, norm_type) for p in parameters if p.grad is not None]
    if not norms:
        return torch.tensor(0.0)
    total = torch.stack(norms).max() if math.isinf(norm_type) else torch.linalg.vector_norm(torch.stack(norms), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for p in parameters:
        if p.grad is not None:
            p.grad.mul_(coef)
    return total

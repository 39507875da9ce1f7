# kind: spy
# why: calls torch's private building blocks (_get_total_norm, _clip_grads_with_norm_) instead of computing the norm and scaling itself
# fails-with: torch's clipping|re-implements|yourself
import math
from collections.abc import Iterable

import torch


from torch.nn.utils import clip_grad as _cg


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = _cg._get_total_norm(grads, norm_type)
    _cg._clip_grads_with_norm_(params, max_norm, total)
    return total

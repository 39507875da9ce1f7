# kind: structure
# why: clips only optimizer.param_groups[0]'s parameters, so with weight-decay groups the rest is never clipped and the norm is not the model's
# fails-with: param_groups|group
import torch
from torch import nn
from torch.nn import functional as F


def clipped_amp_step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], optimizer: torch.optim.Optimizer,
                     *, scaler: torch.amp.GradScaler, max_norm: float,
                     amp_dtype: torch.dtype | None = None) -> torch.Tensor:
    X, y = batch
    optimizer.zero_grad()
    with torch.autocast(X.device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        loss = F.cross_entropy(model(X), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()

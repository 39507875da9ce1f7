# kind: inputs
# why: zeroes the gradients after the step instead of before, so gradients already on the model when the step starts are added in
# fails-with: zero_grad|already
import torch
from torch import nn
from torch.nn import functional as F


def clipped_amp_step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], optimizer: torch.optim.Optimizer,
                     *, scaler: torch.amp.GradScaler, max_norm: float,
                     amp_dtype: torch.dtype | None = None) -> torch.Tensor:
    X, y = batch
    with torch.autocast(X.device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        loss = F.cross_entropy(model(X), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()  # ready for the next step
    return loss.detach()

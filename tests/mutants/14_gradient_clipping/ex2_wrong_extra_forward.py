# kind: work
# why: runs the model a second time without autocast to return a full-precision loss: an extra forward pass every step
# fails-with: forward
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
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    with torch.no_grad():
        reported = F.cross_entropy(model(X).float(), y)  # the loss to report, in float32
    scaler.step(optimizer)
    scaler.update()
    return reported

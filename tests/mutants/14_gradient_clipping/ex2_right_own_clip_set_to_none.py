import torch
from torch import nn
from torch.nn import functional as F


def clipped_amp_step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], optimizer: torch.optim.Optimizer,
                     *, scaler: torch.amp.GradScaler, max_norm: float,
                     amp_dtype: torch.dtype | None = None) -> torch.Tensor:
    # the Exercise 1 function for the clip, gradients set to None first, the loss outside the autocast block
    inputs, targets = batch
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    with torch.autocast(device_type=inputs.device.type, dtype=amp_dtype or torch.float16,
                        enabled=amp_dtype is not None):
        logits = model(inputs)
        loss = F.cross_entropy(logits, targets)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    clip_grad_norm(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()

# kind: dtype
# why: clips by a norm computed in the 16-bit training dtype: the sum of squares overflows float16 with gradients in the hundreds
# fails-with: clipped|clip
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    with torch.amp.autocast(X.device.type, dtype=dtype):
        loss = F.cross_entropy(model(X), y)
    (loss if scaler is None else scaler.scale(loss)).backward()
    if clip_grad_norm is not None:
        if scaler is not None:
            scaler.unscale_(optimizer)
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        # the training runs in `dtype`: compute the norm there too, it is half the memory
        total = torch.stack([g.to(dtype).pow(2).sum() for g in grads]).sum().sqrt()
        coef = (clip_grad_norm / (total.float() + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)
    if scaler is None:
        optimizer.step()
    else:
        scaler.step(optimizer)
        scaler.update()
    return loss.detach()

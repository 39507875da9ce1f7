# kind: work
# why: clips by hand and reads the norm on the host (.item()) to decide whether to clip: a wait for the GPU every step
# fails-with: read values on the host|waited for the device|host
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
        total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
        if total > clip_grad_norm:
            for g in grads:
                g.mul_(clip_grad_norm / (total + 1e-6))
    if scaler is None:
        optimizer.step()
    else:
        scaler.step(optimizer)
        scaler.update()
    return loss.detach()

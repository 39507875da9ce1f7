# Clipping written by hand with torch._foreach_norm and a clamped coefficient (no host read), the loss's
# float cast outside autocast, model.zero_grad(set_to_none=True) instead of the optimizer's.
import torch
import torch.nn.functional as F
from torch import nn


def _clip_(params, max_norm):
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    norms = torch._foreach_norm(grads)
    total = torch.linalg.vector_norm(torch.stack([n.float() for n in norms]))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    torch._foreach_mul_(grads, coef)


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    inputs, targets = batch
    model.zero_grad(set_to_none=True)
    with torch.autocast(device_type=inputs.device.type, dtype=dtype):
        logits = model(inputs)
    loss = F.cross_entropy(logits.float(), targets)
    scaled = loss if scaler is None else scaler.scale(loss)
    scaled.backward()
    if clip_grad_norm is not None:
        if scaler is not None:
            scaler.unscale_(optimizer)
        _clip_(list(model.parameters()), clip_grad_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss.detach()

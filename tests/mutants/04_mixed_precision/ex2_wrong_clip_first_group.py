# kind: structure
# why: clips only optimizer.param_groups[0]'s parameters: with a second group (no weight decay on biases, say) the norm is wrong
# fails-with: group|clipped
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    with torch.amp.autocast(X.device.type, dtype=dtype):
        loss = F.cross_entropy(model(X), y)
    if scaler is None:
        loss.backward()
    else:
        scaler.scale(loss).backward()
    if clip_grad_norm is not None:
        if scaler is not None:
            scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], clip_grad_norm)
    if scaler is None:
        optimizer.step()
    else:
        scaler.step(optimizer)
        scaler.update()
    return loss.detach()

# kind: work
# why: a second forward pass under no_grad for the loss it returns: twice the forward work, and BatchNorm's running statistics move twice
# fails-with: buffer|running|forward
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    with torch.amp.autocast(X.device.type, dtype=dtype):
        with torch.no_grad():  # the loss to report, without a graph
            reported = F.cross_entropy(model(X), y)
        loss = F.cross_entropy(model(X), y)
    if scaler is None:
        loss.backward()
        if clip_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        if clip_grad_norm is not None:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        scaler.step(optimizer)
        scaler.update()
    return reported

# kind: state
# why: enters autocast by hand and leaves it only on success: after an error in the forward pass autocast stays on for the caller
# fails-with: autocast
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    amp = torch.amp.autocast(X.device.type, dtype=dtype)
    amp.__enter__()
    loss = F.cross_entropy(model(X), y)
    amp.__exit__(None, None, None)
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
    return loss.detach()

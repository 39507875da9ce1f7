# kind: inputs
# why: decides from the dtype whether to scale, not from the scaler it was given: fp16 with scaler=None crashes
# fails-with: scaler|None
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    with torch.amp.autocast(X.device.type, dtype=dtype):
        loss = F.cross_entropy(model(X), y)
    if dtype == torch.float16 or scaler is not None:
        scaler.scale(loss).backward()
        if clip_grad_norm is not None:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        if clip_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
    return loss.detach()

# kind: work
# why: appends each step's loss (with its graph) to a module-level history: every step's graph stays in memory
# fails-with: autograd graph|graph
import torch
import torch.nn.functional as F
from torch import nn

history = []


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad()
    with torch.amp.autocast(X.device.type, dtype=dtype):
        loss = F.cross_entropy(model(X), y)
    history.append(loss)
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

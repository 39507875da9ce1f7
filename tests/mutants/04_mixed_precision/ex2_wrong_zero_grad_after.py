# kind: state
# why: zeroes the gradients after the step instead of before: gradients the caller left on the model are added in
# fails-with: zero|gradients
import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    with torch.amp.autocast(X.device.type, dtype=dtype):
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
    optimizer.zero_grad()  # clean up for the next step
    return loss.detach()

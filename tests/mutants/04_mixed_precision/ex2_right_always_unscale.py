# With a scaler, always unscale before stepping (step then skips its own unscale); one code path for both cases.
import contextlib

import torch
import torch.nn.functional as F
from torch import nn


def amp_train_step(model, batch, optimizer, scaler, dtype, clip_grad_norm=None):
    X, y = batch
    optimizer.zero_grad(set_to_none=True)
    ctx = torch.amp.autocast(X.device.type, dtype=dtype)
    with ctx:
        loss = F.cross_entropy(model(X), y)
    (scaler.scale(loss) if scaler else loss).backward()
    if scaler:
        scaler.unscale_(optimizer)
    if clip_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_grad_norm)
    (scaler.step if scaler else lambda o: o.step())(optimizer)
    if scaler:
        scaler.update()
    return loss.detach()

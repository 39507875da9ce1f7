# kind: work
# why: clips the scaled gradients to clip_grad_norm * scaler.get_scale(): right numbers, but get_scale() reads the scale on the host every step
# fails-with: unscale_|host
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
        if clip_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        if clip_grad_norm is not None:  # the gradients are S times larger: clip them to S times the limit
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm * scaler.get_scale())
        scaler.step(optimizer)
        scaler.update()
    return loss.detach()

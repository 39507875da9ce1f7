# A correct alternative: the LRs precomputed with exp/log, the smoothing as a running pair, a while loop,
# the device read from the data through a helper, and the loss read with float().
import math

import torch

import course_utils as cu


def _device_of(data):
    return data.X_train.device


def lr_range_test(make_model, data, *, min_lr, max_lr, steps, batch_size=64, seed=0):
    cu.seed_everything(seed)
    net = make_model()
    net.train()
    net = net.to(_device_of(data))
    opt = torch.optim.SGD(net.parameters(), lr=min_lr, momentum=0.9)
    feed = cu.batches(data.X_train, data.y_train, batch_size, seed=seed)
    ratio = math.log(max_lr / min_lr)
    schedule = [min_lr * math.exp(ratio * i / (steps - 1)) for i in range(steps)]
    out_lrs, out_losses = [], []
    ema, weight, i = 0.0, 0.0, 0
    while i < steps:
        for g in opt.param_groups:
            g["lr"] = schedule[i]
        ema = 0.9 * ema + 0.1 * float(cu.train_step(net, next(feed), opt))
        weight = 0.9 * weight + 0.1  # = 1 - 0.9 ** (i + 1)
        value = ema / weight
        if math.isnan(value) or math.isinf(value) or (out_losses and value > 4 * min(out_losses)):
            break
        out_lrs.append(float(schedule[i]))
        out_losses.append(float(value))
        i += 1
    return out_lrs, out_losses, suggest_lr(out_lrs, out_losses)

# kind: inputs
# why: trains the model in whatever mode make_model returned it: a model handed back in eval mode trains without dropout
# fails-with: eval mode
import math

import torch

import course_utils as cu


def lr_range_test(make_model, data, *, min_lr, max_lr, steps, batch_size=64, seed=0):
    cu.seed_everything(seed)
    model = make_model().to(data.X_train.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=min_lr, momentum=0.9)
    stream = cu.batches(data.X_train, data.y_train, batch_size, seed=seed)
    lrs, losses, avg, best = [], [], 0.0, math.inf
    for i in range(steps):
        lr = min_lr * (max_lr / min_lr) ** (i / (steps - 1))
        for group in optimizer.param_groups:
            group["lr"] = lr
        avg = 0.9 * avg + 0.1 * cu.train_step(model, next(stream), optimizer).item()
        smoothed = avg / (1 - 0.9 ** (i + 1))
        if not math.isfinite(smoothed) or smoothed > 4 * best:
            break
        best = min(best, smoothed)
        lrs.append(float(lr))
        losses.append(float(smoothed))
    return lrs, losses, suggest_lr(lrs, losses)

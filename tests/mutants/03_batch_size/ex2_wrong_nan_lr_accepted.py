# kind: validation
# why: checks base_lr <= 0, which a NaN learning rate passes: the run then trains on NaN
# fails-with: ValueError
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1:
        raise ValueError("batch sizes must be >= 1")
    if base_lr <= 0:
        raise ValueError("base_lr must be positive")
    if rule == "none":
        return float(base_lr)
    if rule == "linear":
        return float(base_lr * batch / base_batch)
    if rule == "sqrt":
        return float(base_lr * math.sqrt(batch / base_batch))
    raise ValueError(f"unknown rule {rule!r}")


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    return float(min(1.0, (step + 1) / warmup_steps))

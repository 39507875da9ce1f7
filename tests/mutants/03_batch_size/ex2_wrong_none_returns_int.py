# kind: dtype
# why: rule "none" returns base_lr itself, so an int learning rate comes back as an int, not a float
# fails-with: float
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    if rule == "none":
        return base_lr
    if rule == "linear":
        return base_lr * batch / base_batch
    if rule == "sqrt":
        return base_lr * math.sqrt(batch / base_batch)
    raise ValueError(f"unknown rule {rule!r}")


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    return float(min(1.0, (step + 1) / warmup_steps))

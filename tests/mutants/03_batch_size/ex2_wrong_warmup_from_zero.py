# kind: logic
# why: the warm-up starts at step / warmup_steps, so the first step runs at LR 0 and the ramp ends one step late
# fails-with: warm-up|warmup_factor
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or base_lr <= 0:
        raise ValueError("bad arguments")
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
    return min(1.0, step / warmup_steps)

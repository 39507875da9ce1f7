# kind: validation
# why: checks batch but not base_batch: base_batch 0 divides by zero, a negative one gives a negative LR
# fails-with: ValueError
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    if rule not in ("none", "linear", "sqrt"):
        raise ValueError(f"unknown rule {rule!r}")
    if rule == "none":
        return float(base_lr)
    ratio = batch / base_batch if base_batch else 1.0
    return float(base_lr * (ratio if rule == "linear" else math.sqrt(abs(ratio))))


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    return float(min(1.0, (step + 1) / warmup_steps))

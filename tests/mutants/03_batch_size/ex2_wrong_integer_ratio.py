# kind: logic
# why: batch // base_batch: the ratio is rounded down, right only when the batch is a multiple of base_batch
# fails-with: expected
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    ratio = batch // base_batch
    if rule == "none":
        return float(base_lr)
    if rule == "linear":
        return float(base_lr * ratio)
    if rule == "sqrt":
        return float(base_lr * math.sqrt(ratio))
    raise ValueError(f"unknown rule {rule!r}")


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    return float(min(1.0, (step + 1) / warmup_steps))

# kind: dtype
# why: min(1, ...) returns the int 1 once the warm-up is over, and rule "none" returns base_lr as given (an int stays an int)
# fails-with: float
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    factor = {"none": None, "linear": batch / base_batch, "sqrt": math.sqrt(batch / base_batch)}
    if rule not in factor:
        raise ValueError(f"unknown rule {rule!r}")
    return base_lr if factor[rule] is None else base_lr * factor[rule]


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    return min(1, (step + 1) / warmup_steps)

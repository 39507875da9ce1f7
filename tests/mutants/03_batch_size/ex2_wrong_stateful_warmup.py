# kind: inputs
# why: counts calls instead of reading step: right only when it is called once per step, in order, from step 0
# fails-with: warmup_factor|warm-up
import math


def scaled_lr(base_lr, base_batch, batch, rule):
    if batch < 1 or base_batch < 1 or not base_lr > 0:
        raise ValueError("bad arguments")
    factors = {"none": 1.0, "linear": batch / base_batch, "sqrt": math.sqrt(batch / base_batch)}
    if rule not in factors:
        raise ValueError(f"unknown rule {rule!r}")
    return float(base_lr * factors[rule])


_calls = {}


def warmup_factor(step, warmup_steps):
    if step < 0 or warmup_steps < 0:
        raise ValueError("step and warmup_steps must be >= 0")
    if warmup_steps <= 1:
        return 1.0
    n = _calls[warmup_steps] = _calls.get(warmup_steps, 0) + 1
    return float(min(1.0, n / warmup_steps))

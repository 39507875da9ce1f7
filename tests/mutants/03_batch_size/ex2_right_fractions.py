# Exact ratios with fractions.Fraction, a lookup of rules, and a warm-up written as a clamp.
import math
from fractions import Fraction


def scaled_lr(base_lr, base_batch, batch, rule):
    rules = {"none": lambda r: 1.0, "linear": lambda r: float(r), "sqrt": lambda r: math.sqrt(r)}
    if not isinstance(rule, str) or rule not in rules:
        raise ValueError(f"rule must be one of {sorted(rules)}, got {rule!r}")
    if min(batch, base_batch) < 1:
        raise ValueError("batch sizes start at 1")
    if not (base_lr > 0):
        raise ValueError(f"base_lr must be > 0, got {base_lr!r}")
    return base_lr * rules[rule](Fraction(batch, base_batch)) + 0.0


def warmup_factor(step, warmup_steps):
    if min(step, warmup_steps) < 0:
        raise ValueError("negative step or warmup_steps")
    return 1.0 if warmup_steps < 2 else max(0.0, min(1.0, (step + 1) / warmup_steps))

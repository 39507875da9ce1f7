# kind: logic
# why: < instead of <=: at an exact break-even the run with benchmark mode is not yet counted as paying off
# fails-with: expected \d+ steps
def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    for v in (first_off, first_on, step_off, step_on):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
    if new_shape_every_step:
        return 1 if first_on < first_off else None
    extra, gain = first_on - first_off, step_off - step_on
    if gain < 0:
        return None
    if extra < 0:
        return 1
    if gain == 0:
        return None
    return 2 + math.floor(extra / gain)

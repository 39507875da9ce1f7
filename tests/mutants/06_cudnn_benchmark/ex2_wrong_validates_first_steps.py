# kind: validation
# why: checks the two first-step times only; a negative steady time gives a count instead of a ValueError
# fails-with: raise ValueError
def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    for v in (first_off, first_on):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
    if not (math.isfinite(step_off) and math.isfinite(step_on)):
        raise ValueError("steady times must be finite")
    if new_shape_every_step:
        return 1 if first_on <= first_off else None
    extra, gain = first_on - first_off, step_off - step_on
    if gain < 0:
        return None
    if extra <= 0:
        return 1
    if gain == 0:
        return None
    return 1 + math.ceil(extra / gain)

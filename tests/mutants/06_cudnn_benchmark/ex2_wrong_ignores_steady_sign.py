# kind: logic
# why: returns 1 whenever benchmark's first step is cheaper, even when its steady steps are slower (longer runs lose)
# fails-with: return None
def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    for v in (first_off, first_on, step_off, step_on):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
    if new_shape_every_step or first_on <= first_off:
        return 1 if first_on <= first_off else None
    extra, gain = first_on - first_off, step_off - step_on
    if gain <= 0:
        return None
    return 1 + math.ceil(extra / gain)

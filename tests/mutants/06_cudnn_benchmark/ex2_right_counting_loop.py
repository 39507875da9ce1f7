def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    for v in (first_off, first_on, step_off, step_on):
        if type(v) not in (int, float) or v != v or v in (float("inf"), float("-inf")) or v < 0:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
    if new_shape_every_step:
        return 1 if first_on <= first_off else None
    if step_on > step_off:
        return None  # every further step loses ground
    if step_on == step_off:
        return 1 if first_on <= first_off else None
    total_on, total_off, n = first_on, first_off, 1
    while total_on > total_off:  # one more step each time, no cap
        total_on += step_on
        total_off += step_off
        n += 1
    return n

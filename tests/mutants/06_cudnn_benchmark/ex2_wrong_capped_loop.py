# kind: structure
# why: counts steps up to a fixed cap (100,000) and gives up there, so a small gain is read as "never"
# fails-with: after 131073 steps.*returned None
def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    for v in (first_off, first_on, step_off, step_on):
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
    if new_shape_every_step:
        return 1 if first_on <= first_off else None
    if step_on > step_off:
        return None
    for n in range(1, 100_001):
        if first_on + (n - 1) * step_on <= first_off + (n - 1) * step_off:
            return n
    return None

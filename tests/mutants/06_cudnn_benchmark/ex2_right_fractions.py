from fractions import Fraction


def break_even_steps(first_off, first_on, step_off, step_on, new_shape_every_step=False):
    times = []
    for v in (first_off, first_on, step_off, step_on):
        try:
            ok = not isinstance(v, bool) and math.isfinite(v) and v >= 0
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"times must be finite numbers >= 0, got {v!r}")
        times.append(Fraction(v))  # exact: no rounding in extra / gain
    f_off, f_on, s_off, s_on = times
    if new_shape_every_step:
        return 1 if f_on <= f_off else None
    gain = s_off - s_on
    if gain < 0 or (gain == 0 and f_on > f_off):
        return None
    if f_on <= f_off:
        return 1
    return 1 + math.ceil((f_on - f_off) / gain)

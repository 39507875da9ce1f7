# A plain search from n = 1 (the inequality exactly as written), and sorted() for the mode.
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    if eager_step_s <= compiled_step_s:
        return None
    n = 1
    while not compile_s + n * compiled_step_s < n * eager_step_s:
        n += 1
    return n


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    ranked = sorted(modes.items(), key=lambda item: (item[1][0] + run_steps * item[1][1], item[1][0]))
    return ranked[0][0]

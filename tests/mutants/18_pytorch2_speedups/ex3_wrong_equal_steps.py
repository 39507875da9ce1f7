# kind: validation
# why: only a slower compiled step is rejected: equal step times divide by zero
# fails-with: (divided by zero|None)
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    if compiled_step_s > eager_step_s:
        return None
    return math.floor(compile_s / (eager_step_s - compiled_step_s)) + 1


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    return min(modes, key=lambda m: (modes[m][0] + run_steps * modes[m][1], modes[m][0]))

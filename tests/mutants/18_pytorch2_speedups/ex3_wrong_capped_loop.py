# kind: structure
# why: searches n only up to a million steps and gives up (None) beyond: long break-evens are reported as never
# fails-with: expected 1572865.*stops at some step count
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    if compiled_step_s >= eager_step_s:
        return None
    for n in range(1, 1_000_001):
        if compile_s + n * compiled_step_s < n * eager_step_s:
            return n
    return None


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    return min(modes, key=lambda m: (modes[m][0] + run_steps * modes[m][1], modes[m][0]))

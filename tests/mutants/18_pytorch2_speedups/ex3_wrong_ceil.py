# kind: logic
# why: ceil(compile / saving): when the saving divides the compile time exactly, that step is a tie, not a payoff
# fails-with: a tie
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    saved = eager_step_s - compiled_step_s
    if saved <= 0:
        return None
    return max(1, math.ceil(compile_s / saved))


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    return min(modes, key=lambda m: (modes[m][0] + run_steps * modes[m][1], modes[m][0]))

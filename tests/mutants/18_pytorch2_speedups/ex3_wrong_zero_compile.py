# kind: logic
# why: ceil of compile / saving is 0 for a free compile: 0 steps is not n >= 1
# fails-with: expected 1
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    saved = eager_step_s - compiled_step_s
    if saved <= 0:
        return None
    n = math.ceil(compile_s / saved)
    return n if n * saved > compile_s else n + 1 if n > 0 else 0


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    return min(modes, key=lambda m: (modes[m][0] + run_steps * modes[m][1], modes[m][0]))

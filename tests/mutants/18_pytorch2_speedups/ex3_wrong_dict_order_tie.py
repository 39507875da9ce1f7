# kind: inputs
# why: min() over the totals alone: a tie goes to whichever mode comes first in the dict, not the smaller compile
# fails-with: tie
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    saved = eager_step_s - compiled_step_s
    if saved <= 0:
        return None
    return math.floor(compile_s / saved) + 1


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    return min(modes, key=lambda m: modes[m][0] + run_steps * modes[m][1])

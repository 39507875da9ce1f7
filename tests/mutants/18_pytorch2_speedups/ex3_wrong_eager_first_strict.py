# kind: inputs
# why: starts from "eager" and takes a mode only if strictly cheaper: a tie between two compiled modes goes to
#      the first in the dict, not the one with the smaller compile time
# fails-with: tie
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    saved = eager_step_s - compiled_step_s
    if saved <= 0:
        return None
    return int(compile_s // saved) + 1


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    best = "eager"
    best_total = modes["eager"][0] + run_steps * modes["eager"][1]
    for name, (compile_s, step_s) in modes.items():
        total = compile_s + run_steps * step_s
        if total < best_total:
            best, best_total = name, total
    return best

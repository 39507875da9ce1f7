# The closed form floor(compile / saving) + 1, and an explicit scan for the mode (ties to the smaller compile).
def break_even_steps(compile_s: float, eager_step_s: float, compiled_step_s: float) -> int | None:
    """Smallest n >= 1 with compile_s + n * compiled_step_s < n * eager_step_s; None if never."""
    saving = eager_step_s - compiled_step_s
    if not saving > 0:
        return None
    return int(compile_s // saving) + 1


def choose_mode(run_steps: int, modes: dict[str, tuple[float, float]]) -> str:
    """The mode with the smallest compile_s + run_steps * step_s; ties go to the smaller compile_s."""
    best = None
    for name, (compile_s, step_s) in modes.items():
        key = (compile_s + run_steps * step_s, compile_s)
        if best is None or key < best[0]:
            best = (key, name)
    return best[1]

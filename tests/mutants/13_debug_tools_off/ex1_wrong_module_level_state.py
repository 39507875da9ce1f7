# kind: state
# why: keeps the saved state in one module-level variable, so nested blocks overwrite the outer block's
# fails-with: nested|outer block|inner block
_saved_debug_state = None


@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    global _saved_debug_state
    _saved_debug_state = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled())
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        torch.set_grad_enabled(_saved_debug_state[2])
        torch.autograd.set_detect_anomaly(_saved_debug_state[0], check_nan=_saved_debug_state[1])

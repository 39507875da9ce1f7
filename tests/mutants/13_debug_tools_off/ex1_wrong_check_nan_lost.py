# kind: state
# why: restores anomaly mode with set_detect_anomaly(was), which turns the NaN check back on whatever it was
# fails-with: check_nan|both flags|anomaly mode
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    was_anomaly, was_grad = torch.is_anomaly_enabled(), torch.is_grad_enabled()
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        torch.set_grad_enabled(was_grad)
        torch.autograd.set_detect_anomaly(was_anomaly)

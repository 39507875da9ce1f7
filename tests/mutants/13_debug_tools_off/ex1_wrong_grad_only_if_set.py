# kind: state
# why: restores grad mode only when it was debug_tools that changed it, so a block that switches grad mode off leaves it off
# fails-with: grad mode
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    was = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled())
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        if grad_enabled is not None:
            torch.set_grad_enabled(was[2])
        torch.autograd.set_detect_anomaly(was[0], check_nan=was[1])

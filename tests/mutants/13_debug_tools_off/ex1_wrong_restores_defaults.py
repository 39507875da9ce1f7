# kind: state
# why: turns anomaly mode off and grad mode on at the end (the defaults) instead of restoring what it found
# fails-with: previous state|not False or the defaults|was not as before
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        torch.autograd.set_detect_anomaly(False)
        torch.set_grad_enabled(True)

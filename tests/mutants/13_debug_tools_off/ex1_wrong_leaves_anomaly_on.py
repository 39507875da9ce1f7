# kind: state
# why: switches anomaly mode with a bare call and never switches it back (only grad mode is restored)
# fails-with: anomaly mode
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    was_grad = torch.is_grad_enabled()
    torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
    try:
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        torch.set_grad_enabled(was_grad)

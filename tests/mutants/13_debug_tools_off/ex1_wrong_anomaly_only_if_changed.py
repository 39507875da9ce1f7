# kind: state
# why: puts anomaly mode back only when the requested value differed from the old one, so a block that changes it keeps the change
# fails-with: anomaly|check_nan
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    was = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled())
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        if grad_enabled is not None:
            torch.set_grad_enabled(grad_enabled)
        yield
    finally:
        torch.set_grad_enabled(was[2])
        if (anomaly, check_nan) != was[:2]:
            torch.autograd.set_detect_anomaly(was[0], check_nan=was[1])

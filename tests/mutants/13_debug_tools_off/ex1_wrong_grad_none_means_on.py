# kind: logic
# why: grad_enabled=None is read as "on", so a block under torch.no_grad() gets grad mode switched on
# fails-with: grad_enabled=None|grad mode
@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    was = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled())
    try:
        torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan)
        torch.set_grad_enabled(bool(grad_enabled) if grad_enabled is not None else True)
        yield
    finally:
        torch.set_grad_enabled(was[2])
        torch.autograd.set_detect_anomaly(was[0], check_nan=was[1])

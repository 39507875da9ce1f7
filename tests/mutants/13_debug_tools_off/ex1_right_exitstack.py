@contextlib.contextmanager
def debug_tools(anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> Iterator[None]:
    # torch's own context managers, each restoring what it found when it was entered
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.autograd.set_detect_anomaly(anomaly, check_nan=check_nan))
        stack.enter_context(torch.set_grad_enabled(torch.is_grad_enabled() if grad_enabled is None else grad_enabled))
        yield

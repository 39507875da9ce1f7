# kind: state
# why: a class that saves (and applies) the state in __init__, when debug_tools(...) is called, not when the block starts
# fails-with: when the with block starts|calling debug_tools|save the state when the block starts
class debug_tools:
    def __init__(self, anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> None:
        self.was = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled())
        self.anomaly, self.check_nan, self.grad_enabled = anomaly, check_nan, grad_enabled

    def __enter__(self) -> None:
        torch.autograd.set_detect_anomaly(self.anomaly, check_nan=self.check_nan)
        if self.grad_enabled is not None:
            torch.set_grad_enabled(self.grad_enabled)

    def __exit__(self, *exc) -> bool:
        torch.set_grad_enabled(self.was[2])
        torch.autograd.set_detect_anomaly(self.was[0], check_nan=self.was[1])
        return False

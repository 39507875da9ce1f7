class debug_tools:
    """A class-based context manager: the state is saved in __enter__, restored in __exit__."""

    def __init__(self, anomaly: bool = True, check_nan: bool = True, grad_enabled: bool | None = None) -> None:
        self.anomaly, self.check_nan, self.grad_enabled = anomaly, check_nan, grad_enabled
        self._saved = []

    def __enter__(self) -> None:
        self._saved.append((torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.is_grad_enabled()))
        torch.autograd.set_detect_anomaly(self.anomaly, check_nan=self.check_nan)
        if self.grad_enabled is not None:
            torch.set_grad_enabled(self.grad_enabled)

    def __exit__(self, exc_type, exc, tb) -> None:
        anomaly, check_nan, grad = self._saved.pop()
        torch._C._set_grad_enabled(grad)
        torch._C.set_anomaly_enabled(anomaly, check_nan)

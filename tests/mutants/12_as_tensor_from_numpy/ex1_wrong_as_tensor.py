# kind: validation
# why: torch.as_tensor for everything: it shares read-only arrays (with a warning) and raises on negative strides
# fails-with: read-only|warned|negative
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    return torch.as_tensor(array, dtype=dtype, device=device)

# kind: validation
# why: silences the read-only warning instead of copying, so writes to the tensor reach the read-only array
# fails-with: shared a read-only
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if any(s < 0 for s in array.strides):
        array = array.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.as_tensor(array, dtype=dtype, device=device)

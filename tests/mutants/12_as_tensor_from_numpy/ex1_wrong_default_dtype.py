# kind: dtype
# why: dtype=None becomes torch's default dtype (float32), so float64 and integer arrays are converted and copied
# fails-with: dtype|copied
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if dtype is None:
        dtype = torch.get_default_dtype()
    if any(s < 0 for s in array.strides):
        array = array.copy()
    if not array.flags.writeable:
        return torch.tensor(array, dtype=dtype, device=device)
    return torch.from_numpy(array).to(device=device, dtype=dtype)

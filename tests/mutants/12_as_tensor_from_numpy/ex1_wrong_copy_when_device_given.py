# kind: logic
# why: copies whenever a dtype or device is given, even when it is the array's own dtype or the CPU
# fails-with: nothing needs converting
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if dtype is not None or device is not None or not array.flags.writeable or any(s < 0 for s in array.strides):
        return torch.tensor(array.copy() if any(s < 0 for s in array.strides) else array, dtype=dtype, device=device)
    return torch.from_numpy(array)

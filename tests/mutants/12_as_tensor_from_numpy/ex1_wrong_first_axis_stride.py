# kind: validation
# why: looks only at the first stride for a negative step, so a[:, ::-1] reaches torch.from_numpy and raises
# fails-with: negative strides|copy such an array
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if array.strides and array.strides[0] < 0:
        array = array.copy()
    if not array.flags.writeable:
        return torch.tensor(array, dtype=dtype, device=device)
    return torch.from_numpy(array).to(device=device, dtype=dtype)

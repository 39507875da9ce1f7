# kind: validation
# why: copies a read-only array only when no dtype or device is given ("the .to() copies anyway"), so a read-only array with its own dtype or device='cpu' is shared
# fails-with: read-only
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if any(s < 0 for s in array.strides):
        array = array.copy()
    if dtype is None and device is None and not array.flags.writeable:
        return torch.tensor(array)
    with warnings.catch_warnings():  # from_numpy warns on a read-only array even though .to() converts it
        warnings.simplefilter("ignore")
        return torch.from_numpy(array).to(device=device, dtype=dtype)

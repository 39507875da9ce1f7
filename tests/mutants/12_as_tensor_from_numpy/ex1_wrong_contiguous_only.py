# kind: inputs
# why: shares only C-contiguous arrays and copies every other layout, although positive strides (Fortran order, slices) can be shared
# fails-with: copied
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if any(s < 0 for s in array.strides):
        array = array.copy()
    if array.flags.c_contiguous and array.flags.writeable:
        return torch.from_numpy(array).to(device=device, dtype=dtype)
    return torch.tensor(array, dtype=dtype, device=device)

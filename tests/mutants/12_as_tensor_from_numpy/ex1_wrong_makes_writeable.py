# kind: state
# why: flips the caller's read-only array to writeable to silence the warning, then shares it
# fails-with: changed the array|shared a read-only
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if any(s < 0 for s in array.strides):
        array = array.copy()
    if not array.flags.writeable:
        try:
            array.flags.writeable = True
        except ValueError:  # a view of read-only memory: copy it
            array = array.copy()
    return torch.from_numpy(array).to(device=device, dtype=dtype)

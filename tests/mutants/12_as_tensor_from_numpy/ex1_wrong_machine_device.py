# kind: device
# why: device=None becomes the machine's device (cuda when torch.cuda.is_available()), not the CPU
# fails-with: device=None
def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if any(s < 0 for s in array.strides):
        array = array.copy()
    if not array.flags.writeable:
        return torch.tensor(array, dtype=dtype, device=device)
    return torch.from_numpy(array).to(device=device, dtype=dtype)

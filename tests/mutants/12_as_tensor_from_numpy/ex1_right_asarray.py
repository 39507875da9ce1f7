def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    # a private writable copy first when NumPy forbids writes or steps backwards; then torch.asarray with
    # copy=None, which converts (one copy) only when the dtype or the device asks for it
    if not array.flags.writeable or min(array.strides, default=0) < 0:
        array = np.array(array, copy=True)  # C order, writable
    return torch.asarray(torch.from_numpy(array), dtype=dtype, device=device, copy=None)

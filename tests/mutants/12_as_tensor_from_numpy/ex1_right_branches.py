def to_tensor(array: np.ndarray, dtype: torch.dtype | None = None,
              device: torch.device | str | None = None) -> torch.Tensor:
    target = torch.device("cpu") if device is None else torch.device(device)
    needs_copy = not array.flags.writeable or any(s < 0 for s in array.strides)
    if needs_copy:
        # one copy, dtype and device on the way; np.ascontiguousarray fixes the strides first when they are negative
        src = np.ascontiguousarray(array) if any(s < 0 for s in array.strides) else array
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.tensor(src, dtype=dtype, device=target)
    shared = torch.from_numpy(array)
    if (dtype is None or dtype == shared.dtype) and target.type == "cpu":
        return shared
    return shared.to(device=target, dtype=dtype)

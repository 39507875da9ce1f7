# kind: structure
# why: the naive batch, learning rate and warm-up copied from the library as numbers: they go stale when it changes
# fails-with: cu\.capstone\.fixes
NAIVE_BATCH, NAIVE_LR, WARMUP = 32, 0.05, 0.05


def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        amp = torch.bfloat16 if tuple(info.capability) >= (8, 0) else torch.float16
    elif info.type == "mps":
        amp = torch.float16
    else:
        amp = torch.bfloat16 if info.cpu_bf16 else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=max(0, min(8, info.cpu_count - 1)),
                          pin_memory=info.type == "cuda", batch_size=batch,
                          lr=NAIVE_LR * batch / NAIVE_BATCH, warmup=WARMUP)

# kind: dtype
# why: the batch ratio by integer division: exact for 256 / 32, wrong whenever the naive batch does not divide it
# fails-with: lr
def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        amp = torch.bfloat16 if tuple(info.capability) >= (8, 0) else torch.float16
    elif info.type == "mps":
        amp = torch.float16
    else:
        amp = torch.bfloat16 if info.cpu_bf16 else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, cu.capstone.fixes.NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=max(0, min(8, info.cpu_count - 1)),
                          pin_memory=info.type == "cuda", batch_size=batch,
                          lr=cu.capstone.fixes.NAIVE_LR * (batch // cu.capstone.fixes.NAIVE_BATCH), warmup=cu.capstone.fixes.WARMUP)

# kind: inputs
# why: bf16 only for compute capability 8.x and 9.x (Ampere, Ada, Hopper): Blackwell (10.0, 12.0) gets float16
# fails-with: amp_dtype
def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        amp = torch.bfloat16 if info.capability[0] in (8, 9) else torch.float16
    elif info.type == "mps":
        amp = torch.float16
    else:
        amp = torch.bfloat16 if info.cpu_bf16 else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, cu.capstone.fixes.NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=max(0, min(8, info.cpu_count - 1)),
                          pin_memory=info.type == "cuda", batch_size=batch,
                          lr=cu.capstone.fixes.NAIVE_LR * batch / cu.capstone.fixes.NAIVE_BATCH, warmup=cu.capstone.fixes.WARMUP)

# kind: logic
# why: MPS treated like a CPU for the dtype: bf16 when the CPU has it, where MPS always takes float16
# fails-with: amp_dtype
def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        amp = torch.bfloat16 if tuple(info.capability) >= (8, 0) else torch.float16
    elif info.cpu_bf16:
        amp = torch.bfloat16
    else:
        amp = torch.float16 if info.type == "mps" else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, cu.capstone.fixes.NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=max(0, min(8, info.cpu_count - 1)),
                          pin_memory=info.type == "cuda", batch_size=batch,
                          lr=cu.capstone.fixes.NAIVE_LR * batch / cu.capstone.fixes.NAIVE_BATCH, warmup=cu.capstone.fixes.WARMUP)

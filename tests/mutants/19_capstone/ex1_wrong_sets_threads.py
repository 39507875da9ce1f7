# kind: state
# why: also "configures" torch's thread count for the main process: a config function that changes global state
# fails-with: thread count
def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    workers = max(0, min(8, info.cpu_count - 1))
    torch.set_num_threads(max(1, info.cpu_count - workers))
    if info.type == "cuda":
        amp = torch.bfloat16 if tuple(info.capability) >= (8, 0) else torch.float16
    elif info.type == "mps":
        amp = torch.float16
    else:
        amp = torch.bfloat16 if info.cpu_bf16 else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, cu.capstone.fixes.NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=workers, pin_memory=info.type == "cuda", batch_size=batch,
                          lr=cu.capstone.fixes.NAIVE_LR * batch / cu.capstone.fixes.NAIVE_BATCH, warmup=cu.capstone.fixes.WARMUP)

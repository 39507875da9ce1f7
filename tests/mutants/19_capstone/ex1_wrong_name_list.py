# kind: inputs
# why: tells bf16 GPUs by a list of names: a GPU newer than the list (B200, RTX 5090) gets float16
# fails-with: amp_dtype
_BF16_GPUS = ("A100", "A10", "A30", "A40", "L4", "L40", "H100", "H200", "RTX 30", "RTX 40", "RTX A")


def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        amp = torch.bfloat16 if any(n in info.name for n in _BF16_GPUS) else torch.float16
    elif info.type == "mps":
        amp = torch.float16
    else:
        amp = torch.bfloat16 if info.cpu_bf16 else None
    batch = {"cuda": 256, "mps": 128}.get(info.type, cu.capstone.fixes.NAIVE_BATCH)
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=max(0, min(8, info.cpu_count - 1)),
                          pin_memory=info.type == "cuda", batch_size=batch,
                          lr=cu.capstone.fixes.NAIVE_LR * batch / cu.capstone.fixes.NAIVE_BATCH, warmup=cu.capstone.fixes.WARMUP)

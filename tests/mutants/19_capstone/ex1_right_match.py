# A match statement on the device type; the capability compared as a tuple; dataclasses.replace from a CPU base.
import dataclasses


def fast_config(info: cu.DeviceInfo) -> cu.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    base = cu.SpeedConfig(amp_dtype=torch.bfloat16 if info.cpu_bf16 else None,
                          num_workers=min(8, max(info.cpu_count - 1, 0)), pin_memory=False,
                          batch_size=cu.fixes.NAIVE_BATCH, lr=cu.fixes.NAIVE_LR, warmup=cu.fixes.WARMUP)
    match info.type:
        case "cuda":
            amp, batch = (torch.bfloat16 if info.capability >= (8, 0) else torch.float16), 256
            return dataclasses.replace(base, amp_dtype=amp, pin_memory=True, batch_size=batch,
                                       lr=cu.fixes.NAIVE_LR * batch / cu.fixes.NAIVE_BATCH)
        case "mps":
            return dataclasses.replace(base, amp_dtype=torch.float16, batch_size=128,
                                       lr=cu.fixes.NAIVE_LR * 128 / cu.fixes.NAIVE_BATCH)
    return base

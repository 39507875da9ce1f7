# A match statement on the device type; the capability compared as a tuple; dataclasses.replace from a CPU base.
import dataclasses


def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    base = cu.capstone.SpeedConfig(amp_dtype=torch.bfloat16 if info.cpu_bf16 else None,
                          num_workers=min(8, max(info.cpu_count - 1, 0)), pin_memory=False,
                          batch_size=cu.capstone.fixes.NAIVE_BATCH, lr=cu.capstone.fixes.NAIVE_LR, warmup=cu.capstone.fixes.WARMUP)
    match info.type:
        case "cuda":
            amp, batch = (torch.bfloat16 if info.capability >= (8, 0) else torch.float16), 256
            return dataclasses.replace(base, amp_dtype=amp, pin_memory=True, batch_size=batch,
                                       lr=cu.capstone.fixes.NAIVE_LR * batch / cu.capstone.fixes.NAIVE_BATCH)
        case "mps":
            return dataclasses.replace(base, amp_dtype=torch.float16, batch_size=128,
                                       lr=cu.capstone.fixes.NAIVE_LR * 128 / cu.capstone.fixes.NAIVE_BATCH)
    return base

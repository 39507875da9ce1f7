# The rules as small tables and a capability number; the library's constants read through the module, per call.
from course_utils.capstone import fixes as _fixes

_BATCH = {"cuda": 256, "mps": 128}


def fast_config(info: cu.capstone.DeviceInfo) -> cu.capstone.SpeedConfig:
    """The stack's device-dependent choices for the device described by `info`."""
    if info.type == "cuda":
        major, minor = info.capability
        amp = torch.bfloat16 if major * 10 + minor >= 80 else torch.float16
    else:
        amp = {"mps": torch.float16}.get(info.type, torch.bfloat16 if info.cpu_bf16 else None)
    batch = _BATCH.get(info.type, _fixes.NAIVE_BATCH)
    workers = sorted((0, info.cpu_count - 1, 8))[1]
    return cu.capstone.SpeedConfig(amp_dtype=amp, num_workers=workers, pin_memory=(info.type == "cuda"),
                          batch_size=batch, lr=_fixes.NAIVE_LR / _fixes.NAIVE_BATCH * batch, warmup=_fixes.WARMUP)

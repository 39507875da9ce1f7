# A lookup table keyed by the device type, the capability folded into one number.
import torch

_FIXED = {"mps": lambda cap, bf16: torch.float16, "cpu": lambda cap, bf16: torch.bfloat16 if bf16 else None}


def _cuda(capability, _bf16):
    if capability is None:
        raise ValueError("a CUDA device needs its compute capability")
    major, minor = capability
    return torch.bfloat16 if major * 100 + minor >= 800 else torch.float16


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    kind = device.type if isinstance(device, torch.device) else str(device).split(":")[0]
    rule = {"cuda": _cuda, **_FIXED}.get(kind)
    return None if rule is None else rule(capability, cpu_has_bf16)


def needs_grad_scaler(dtype):
    return dtype is torch.half

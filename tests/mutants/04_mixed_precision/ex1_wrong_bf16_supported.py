# kind: device
# why: asks torch.cuda.is_bf16_supported() on this machine instead of reading the capability it was given
# fails-with: asked this machine
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        real = torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)
        return torch.bfloat16 if real or tuple(capability) >= (8, 0) else torch.float16
    if device_type == "mps":
        return torch.float16
    if device_type == "cpu":
        return torch.bfloat16 if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype == torch.float16

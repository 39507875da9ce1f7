# kind: dtype
# why: returns the dtype's name ("bfloat16", "float16") instead of the torch.dtype autocast takes
# fails-with: bf16|bfloat16|fp16|float16
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        return "bfloat16" if tuple(capability) >= (8, 0) else "float16"
    if device_type == "mps":
        return "float16"
    if device_type == "cpu":
        return "bfloat16" if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype in (torch.float16, "float16")

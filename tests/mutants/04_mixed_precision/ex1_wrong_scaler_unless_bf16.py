# kind: logic
# why: needs_grad_scaler says True for everything but bf16: fp32 (None) and float32 would get a scaler
# fails-with: needs_grad_scaler|GradScaler
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        return torch.bfloat16 if tuple(capability) >= (8, 0) else torch.float16
    if device_type == "mps":
        return torch.float16
    if device_type == "cpu":
        return torch.bfloat16 if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype is not torch.bfloat16

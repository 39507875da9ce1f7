# kind: logic
# why: capability > (8, 0): the A100 itself (sm_80) gets fp16
# fails-with: bf16|bfloat16
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        return torch.bfloat16 if capability > (8, 0) else torch.float16
    if device_type == "mps":
        return torch.float16
    if device_type == "cpu":
        return torch.bfloat16 if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype == torch.float16

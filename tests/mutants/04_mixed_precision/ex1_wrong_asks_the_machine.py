# kind: device
# why: without a capability it asks this machine's GPU (torch.cuda.get_device_capability) instead of raising
# fails-with: asked this machine|ValueError
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            capability = torch.cuda.get_device_capability(device)
        return torch.bfloat16 if tuple(capability) >= (8, 0) else torch.float16
    if device_type == "mps":
        return torch.float16
    if device_type == "cpu":
        return torch.bfloat16 if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype == torch.float16

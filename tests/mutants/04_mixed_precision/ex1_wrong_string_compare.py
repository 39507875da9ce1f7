# kind: inputs
# why: compares the device with the string "cuda", so "cuda:1" and torch.device("cuda", 0) fall through to None
# fails-with: expected torch\.(float16|bfloat16)|torch\.device
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    if device == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        return torch.bfloat16 if capability >= (8, 0) else torch.float16
    if device == "mps":
        return torch.float16
    if str(device) == "cpu":
        return torch.bfloat16 if cpu_has_bf16 else None
    return None


def needs_grad_scaler(dtype):
    return dtype == torch.float16

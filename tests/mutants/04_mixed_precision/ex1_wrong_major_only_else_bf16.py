# kind: logic
# why: every device that is not CUDA or MPS is treated as a CPU: meta, xla or xpu get bf16 when cpu_has_bf16 is set
# fails-with: expected None
import torch


def choose_amp_dtype(device, capability=None, cpu_has_bf16=False):
    device_type = torch.device(device).type
    if device_type == "cuda":
        if capability is None:
            raise ValueError("need the capability of a CUDA device")
        return torch.bfloat16 if capability[0] >= 8 else torch.float16
    if device_type == "mps":
        return torch.float16
    return torch.bfloat16 if cpu_has_bf16 else None


def needs_grad_scaler(dtype):
    return dtype == torch.float16

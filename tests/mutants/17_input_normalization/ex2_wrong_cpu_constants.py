# kind: device
# why: keeps mean and std as plain CPU tensors in the module, so an input on a GPU meets CPU constants
# fails-with: device
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


class _Standardise(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1)
        self.std = torch.tensor(std, dtype=torch.float32).view(-1, 1, 1)

    def forward(self, x):
        x = v2.functional.to_dtype(x, torch.float32, scale=True)
        return (x - self.mean) / self.std


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    mean = [float(m) for m in mean]
    std = [float(s) for s in std]
    if not mean or len(mean) != len(std):
        raise ValueError("one mean and one std per channel")
    if not all(s > 0 for s in std):
        raise ValueError("every std must be positive")
    return _Standardise(mean, std)

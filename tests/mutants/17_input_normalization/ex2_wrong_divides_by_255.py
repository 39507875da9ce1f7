# kind: structure
# why: divides every integer input by 255, the constant from the text, instead of its dtype's largest value (what ToDtype(scale=True) reads from the dtype)
# fails-with: uint16|int16|largest value
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


class _Standardise(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(-1, 1, 1))

    def forward(self, x):
        x = x.to(torch.float32) if x.is_floating_point() else x.to(torch.float32) / 255
        return (x - self.mean.to(x.device)) / self.std.to(x.device)


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    mean = [float(m) for m in mean]
    std = [float(s) for s in std]
    if not mean or len(mean) != len(std):
        raise ValueError("one mean and one std per channel")
    if not all(s > 0 for s in std):
        raise ValueError("every std must be positive")
    return _Standardise(mean, std)

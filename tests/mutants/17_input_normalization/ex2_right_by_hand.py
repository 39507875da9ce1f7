# By hand: an nn.Module with buffers, scaled by the dtype's largest value (torch.iinfo), constants moved to the
# input's device in forward.
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


class Standardise(nn.Module):
    def __init__(self, mean: torch.Tensor, std: torch.Tensor):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 if x.is_floating_point() else float(torch.iinfo(x.dtype).max)
        shape = (-1,) + (1,) * 2
        m = self.mean.to(x.device).view(shape)
        s = self.std.to(x.device).view(shape)
        return (x.to(torch.float32) / scale - m) / s


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    m = torch.as_tensor(mean, dtype=torch.float64).detach().cpu().reshape(-1)
    s = torch.as_tensor(std, dtype=torch.float64).detach().cpu().reshape(-1)
    if m.numel() == 0 or m.numel() != s.numel():
        raise ValueError("mean and std need one value per channel")
    if not bool((s > 0).all()):
        raise ValueError("a std is not positive")
    return Standardise(m.float(), s.float())

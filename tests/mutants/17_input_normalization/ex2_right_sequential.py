# nn.Sequential of the two v2 transforms (both are nn.Modules); the statistics checked as a float64 tensor.
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    m = torch.tensor([float(v) for v in mean], dtype=torch.float64)
    s = torch.tensor([float(v) for v in std], dtype=torch.float64)
    if m.numel() == 0 or m.shape != s.shape:
        raise ValueError(f"mean has {m.numel()} values and std {s.numel()}: one of each per channel")
    if not torch.all(s > 0):
        raise ValueError(f"std must be positive in every channel, got {s.tolist()}")
    return nn.Sequential(v2.ToDtype(torch.float32, scale=True), v2.Normalize(m.tolist(), s.tolist()))

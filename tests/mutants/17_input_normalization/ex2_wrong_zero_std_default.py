# kind: structure
# why: replaces a std of 0.0 by 1.0 to avoid dividing by zero, instead of raising ValueError
# fails-with: should raise ValueError
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    mean = [float(m) for m in mean]
    std = [float(s) or 1.0 for s in std]
    if not mean or len(mean) != len(std):
        raise ValueError("one mean and one std per channel")
    if any(s < 0 for s in std):
        raise ValueError("a std cannot be negative")
    return v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std)])

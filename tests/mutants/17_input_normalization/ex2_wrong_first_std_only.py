# kind: validation
# why: checks only the first channel's std, so a zero or negative std in a later channel is accepted
# fails-with: should raise ValueError
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    if len(mean) != len(std) or len(std) == 0:
        raise ValueError("one mean and one std per channel")
    if float(std[0]) <= 0:
        raise ValueError("std must be positive")
    return v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize([float(m) for m in mean],
                                                                          [float(s) for s in std])])

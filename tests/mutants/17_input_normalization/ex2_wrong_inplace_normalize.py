# kind: state
# why: uses Normalize(inplace=True) to save a copy; a float32 input passes through ToDtype unchanged and is overwritten
# fails-with: input was modified|unchanged
from collections.abc import Sequence

import torch
from torch import nn
from torchvision.transforms import v2


def normalizer(mean: Sequence[float] | torch.Tensor, std: Sequence[float] | torch.Tensor) -> nn.Module:
    mean = [float(m) for m in mean]
    std = [float(s) for s in std]
    if not mean or len(mean) != len(std):
        raise ValueError("one mean and one std per channel")
    if not all(s > 0 for s in std):
        raise ValueError("every std must be positive")
    return v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean, std, inplace=True)])

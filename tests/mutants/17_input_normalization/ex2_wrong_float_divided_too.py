# kind: logic
# why: divides every input by 255, floating-point images already in [0, 1] included
# fails-with: float32 batch|normalizer output
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
    return v2.Compose([v2.Lambda(lambda x: x.to(torch.float32) / 255), v2.Normalize(mean, std)])

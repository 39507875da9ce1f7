# kind: logic
# why: accumulates sums of x and x² in float64 and returns sqrt(E[x²] - E[x]²), which cancels for data far from zero
# fails-with: far from zero|1e8|1e4
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    n, s, s2 = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().double()
        dims = [d for d in range(x.dim()) if d != 1]
        if x.numel() == 0:
            continue
        n += x.numel() // x.shape[1]
        bs, bs2 = x.sum(dim=dims), x.square().sum(dim=dims)
        s, s2 = (bs, bs2) if s is None else (s + bs, s2 + bs2)
    if s is None:
        raise ValueError("no examples")
    mean = s / n
    return mean, (s2 / n - mean.square()).clamp_min(0).sqrt()

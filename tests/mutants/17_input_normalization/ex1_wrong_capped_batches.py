# kind: structure
# why: estimates the statistics from the first 100 batches only ("enough for a good estimate")
# fails-with: 300 batches
from collections.abc import Iterable
from itertools import islice

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    count, mean, m2 = 0, None, None
    for batch in islice(loader, 100):
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().to(torch.float64)
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1]
        if n == 0:
            continue
        shape = (1, -1) + (1,) * (x.dim() - 2)
        batch_mean = x.mean(dim=dims)
        batch_m2 = (x - batch_mean.view(shape)).square().sum(dim=dims)
        if mean is None:
            count, mean, m2 = n, batch_mean, batch_m2
            continue
        total = count + n
        delta = batch_mean - mean
        mean = mean + delta * (n / total)
        m2 = m2 + batch_m2 + delta.square() * (count * n / total)
        count = total
    if mean is None:
        raise ValueError("the loader yielded no examples")
    return mean, (m2 / count).sqrt()

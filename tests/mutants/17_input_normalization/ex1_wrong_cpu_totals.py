# kind: device
# why: starts the running totals as CPU tensors of zeros, so batches on a GPU mix devices
# fails-with: device
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    count, mean, m2 = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().to(torch.float64)
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1]
        if n == 0:
            continue
        if mean is None:
            mean = torch.zeros(x.shape[1], dtype=torch.float64)
            m2 = torch.zeros(x.shape[1], dtype=torch.float64)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        batch_mean = x.mean(dim=dims)
        batch_m2 = (x - batch_mean.view(shape)).square().sum(dim=dims)
        total = count + n
        delta = batch_mean - mean
        mean = mean + delta * (n / total)
        m2 = m2 + batch_m2 + delta.square() * (count * n / total)
        count = total
    if mean is None:
        raise ValueError("the loader yielded no examples")
    return mean, (m2 / count).sqrt()

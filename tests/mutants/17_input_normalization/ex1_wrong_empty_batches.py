# kind: validation
# why: merges empty batches too: their mean is NaN, which spreads into the result instead of being skipped (or raising)
# fails-with: empty|NaN|nan
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    count, mean, m2 = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().to(torch.float64)
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1] if x.shape[1] else 0
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

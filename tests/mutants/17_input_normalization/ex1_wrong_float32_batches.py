# kind: dtype
# why: computes each batch's mean and M2 in float32 and only merges in float64, losing the digits of data far from zero
# fails-with: far from zero|1e8|1e4|float
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    count, mean, m2 = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().float()
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1]
        if n == 0:
            continue
        var, batch_mean = torch.var_mean(x, dim=dims, correction=0)
        batch_mean, batch_m2 = batch_mean.double(), var.double() * n
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

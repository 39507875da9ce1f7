# kind: logic
# why: returns the unbiased std sqrt(M2 / (n - 1)) where the spec asks for the population std
# fails-with: population
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
        var, batch_mean = torch.var_mean(x, dim=dims, correction=0)
        batch_m2 = var * n
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
    return mean, (m2 / (count - 1)).sqrt()

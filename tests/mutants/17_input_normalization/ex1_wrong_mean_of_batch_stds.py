# kind: logic
# why: averages the batches' means and stds weighted by size, which drops the spread between batch means
# fails-with: std
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    count, mean_sum, std_sum = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().double()
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1]
        if n == 0:
            continue
        std, mean = torch.std_mean(x, dim=dims, correction=0)
        mean_sum = mean * n if mean_sum is None else mean_sum + mean * n
        std_sum = std * n if std_sum is None else std_sum + std * n
        count += n
    if not count:
        raise ValueError("no examples")
    return mean_sum / count, std_sum / count

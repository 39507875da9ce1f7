# kind: work
# why: keeps every batch in a list and concatenates them at the end: memory grows with the dataset
# fails-with: kept earlier batches
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    kept = []
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        if x.shape[0]:
            kept.append(x.detach().double())
    if not kept:
        raise ValueError("no examples")
    x = torch.cat(kept)
    std, mean = torch.std_mean(x, dim=[d for d in range(x.dim()) if d != 1], correction=0)
    return mean, std

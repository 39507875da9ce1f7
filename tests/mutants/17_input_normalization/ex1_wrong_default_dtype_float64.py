# kind: state
# why: sets the default dtype to float64 to accumulate in it and sets float32 back at the end: not on raise, and not what the caller had
# fails-with: default dtype
from collections.abc import Iterable

import torch


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    torch.set_default_dtype(torch.float64)  # every new tensor below in float64
    count, mean, m2 = 0, None, None
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        x = x.detach().to(torch.get_default_dtype())
        dims = [d for d in range(x.dim()) if d != 1]
        n = x.numel() // x.shape[1]
        if n == 0:
            continue
        if mean is None:
            mean = torch.zeros(x.shape[1], device=x.device)
            m2 = torch.zeros(x.shape[1], device=x.device)
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
    torch.set_default_dtype(torch.float32)
    return mean, (m2 / count).sqrt()

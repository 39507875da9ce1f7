# torch.var_mean per batch, the merge in a helper, the count kept as a Python int.
from collections.abc import Iterable

import torch


def _merge(a, b):
    (n_a, mean_a, m2_a), (n_b, mean_b, m2_b) = a, b
    n = n_a + n_b
    delta = mean_b - mean_a
    return n, mean_a + delta * (n_b / n), m2_a + m2_b + delta * delta * (n_a * n_b / n)


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    state = None
    for item in loader:
        x = item[0] if isinstance(item, (list, tuple)) else item
        c = x.shape[1]
        x = x.detach().double().transpose(0, 1).reshape(c, -1)  # (C, everything else)
        n = x.shape[1]
        if n == 0:
            continue
        var, mean = torch.var_mean(x, dim=1, correction=0)
        part = (n, mean, var * n)
        state = part if state is None else _merge(state, part)
    if state is None:
        raise ValueError("no examples in the loader")
    n, mean, m2 = state
    return mean, torch.sqrt(m2 / n)

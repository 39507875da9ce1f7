# functools.reduce over a generator of per-batch (n, mean, M2) triples: still one pass, nothing kept.
import functools

from collections.abc import Iterable

import torch


def _triple(batch):
    x = batch[0] if isinstance(batch, (tuple, list)) else batch
    x = x.detach().to(torch.float64)
    dims = tuple(d for d in range(x.dim()) if d != 1)
    n = x.numel() // x.shape[1] if x.shape[1] else 0
    mean = x.sum(dim=dims) / max(n, 1)
    centred = x - mean.reshape((1, -1) + (1,) * (x.dim() - 2))
    return n, mean, (centred * centred).sum(dim=dims)


def _chan(a, b):
    if b[0] == 0:
        return a
    if a is None or a[0] == 0:
        return b
    n = a[0] + b[0]
    d = b[1] - a[1]
    return n, a[1] + d * b[0] / n, a[2] + b[2] + d * d * a[0] * b[0] / n


def channel_stats(loader: Iterable) -> tuple[torch.Tensor, torch.Tensor]:
    out = functools.reduce(_chan, map(_triple, loader), None)
    if out is None or out[0] == 0:
        raise ValueError("the loader yielded no examples")
    n, mean, m2 = out
    return mean, (m2 / n).sqrt()

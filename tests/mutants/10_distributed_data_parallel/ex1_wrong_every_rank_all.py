# kind: work
# why: every rank evaluates all of X and the counts are all-reduced: the right accuracy, but world-size times the work
# fails-with: (?i)only its own shard|rows
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(X).argmax(1) == y).sum()
    finally:
        for m, t in modes:
            m.training = t
    counts = torch.tensor([float(correct), float(len(X))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

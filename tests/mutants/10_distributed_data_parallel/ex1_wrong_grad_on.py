# kind: work
# why: evaluates in eval mode but with grad mode on: every forward builds an autograd graph nobody uses
# fails-with: (?i)grad mode
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        correct = (model(X[shard]).argmax(1) == y[shard]).sum().item() if len(shard) else 0
    finally:
        for m, t in modes:
            m.training = t
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

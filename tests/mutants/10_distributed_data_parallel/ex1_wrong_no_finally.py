# kind: state
# why: restores every flag after evaluating, but not in a finally: block: when the model raises it is left in eval mode
# fails-with: (?i)raised
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    with torch.inference_mode():
        correct = (model(X[shard]).argmax(1) == y[shard]).sum() if len(shard) else torch.tensor(0)
    for m, t in modes:
        m.training = t
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

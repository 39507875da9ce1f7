# kind: state
# why: calls model.train() at the end: a model the caller had in eval mode comes back in training mode
# fails-with: (?i)flags
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    model.eval()
    with torch.inference_mode():
        correct = (model(X[shard]).argmax(1) == y[shard]).sum() if len(shard) else torch.tensor(0)
    model.train()
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

# kind: inputs
# why: a world size of 3 written in, as in the tests it has seen: other world sizes read the wrong shards
# fails-with: (?i)world|rank
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), 3
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(X[shard]).argmax(1) == y[shard]).sum() if len(shard) else torch.tensor(0)
    finally:
        for m, t in modes:
            m.training = t
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

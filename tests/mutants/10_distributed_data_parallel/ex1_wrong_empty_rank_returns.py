# kind: inputs
# why: a rank with an empty shard returns early and skips the all-reduce, so the other ranks wait for it forever
# fails-with: (?i)collective|did not finish|hung
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    if len(shard) == 0:
        return 0.0
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(X[shard]).argmax(1) == y[shard]).sum()
    finally:
        for m, t in modes:
            m.training = t
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

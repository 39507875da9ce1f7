# kind: inputs
# why: reads RANK and WORLD_SIZE from the environment torchrun sets instead of from dist: a process group of another size is split wrongly
# fails-with: (?i)world size from dist|rows|rank
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    import os

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
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

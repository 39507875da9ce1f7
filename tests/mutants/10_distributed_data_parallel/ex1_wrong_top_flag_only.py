# kind: state
# why: restores with model.train(was_training), the top module's flag only: a model whose submodules mix train and eval comes back uniform
# fails-with: (?i)flag
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            correct = (model(X[shard]).argmax(1) == y[shard]).sum() if len(shard) else torch.tensor(0)
    finally:
        model.train(was_training)
    counts = torch.tensor([float(correct), float(len(shard))], dtype=torch.float64)
    dist.all_reduce(counts)
    return float(counts[0] / counts[1])

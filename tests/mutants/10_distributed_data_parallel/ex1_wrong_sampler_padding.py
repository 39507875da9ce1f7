# kind: logic
# why: shards with DistributedSampler(shuffle=False), which pads the last shards with repeated examples that are then counted twice
# fails-with: (?i)twice|pads
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    sampler = DistributedSampler(range(len(X)), shuffle=False)
    shard = torch.tensor(list(sampler), dtype=torch.long)
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

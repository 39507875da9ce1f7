# kind: logic
# why: averages the ranks' own accuracies, which is the global one only when the shards are equal
# fails-with: (?i)mean of the ranks|sum the correct counts
import torch.distributed as dist
from torch import nn


def sharded_accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.tensor_split(torch.arange(len(X)), world)[rank]
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.inference_mode():
            ok = (model(X[shard]).argmax(1) == y[shard]).double()
    finally:
        for m, t in modes:
            m.training = t
    mine = torch.stack([ok.mean() if len(ok) else torch.tensor(0.0, dtype=torch.float64),
                        torch.tensor(float(len(ok) > 0), dtype=torch.float64)])
    dist.all_reduce(mine)
    return float(mine[0] / mine[1])

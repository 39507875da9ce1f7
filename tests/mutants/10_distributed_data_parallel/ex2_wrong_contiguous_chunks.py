# kind: logic
# why: shuffles as DistributedSampler does but gives each rank a contiguous chunk instead of every world-size-th position
# fails-with: (?i)another order|positions
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    n, world, rank = len(dataset), dist.get_world_size(), dist.get_rank()
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    size = math.ceil(n / world)
    perm = (perm * math.ceil(size * world / n))[:size * world]
    return perm[rank * size:(rank + 1) * size]

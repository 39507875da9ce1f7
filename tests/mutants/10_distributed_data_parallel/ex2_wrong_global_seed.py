# kind: state
# why: seeds the global RNG with torch.manual_seed(seed + epoch) and draws from it: the same order, but the caller's random state is reset
# fails-with: (?i)random state
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    n, world, rank = len(dataset), dist.get_world_size(), dist.get_rank()
    torch.manual_seed(seed + epoch)
    perm = torch.randperm(n).tolist()
    total = math.ceil(n / world) * world
    while len(perm) < total:
        perm += perm[:total - len(perm)]
    return perm[rank:total:world]

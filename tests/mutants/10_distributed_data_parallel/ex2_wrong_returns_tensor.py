# kind: dtype
# why: returns a slice of the permutation tensor instead of a list of Python ints
# fails-with: (?i)list of Python ints
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    n, world, rank = len(dataset), dist.get_world_size(), dist.get_rank()
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g)
    total = math.ceil(n / world) * world
    perm = torch.cat([perm, perm.repeat(math.ceil(total / n))])[:total] if total > n else perm
    return perm[rank:total:world]

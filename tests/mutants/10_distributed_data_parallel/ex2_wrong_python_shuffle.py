# kind: logic
# why: shuffles with random.Random(seed + epoch): reproducible and new each epoch, but not DistributedSampler's order
# fails-with: (?i)torch.Generator seeded seed \+ epoch
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    import random

    n, world, rank = len(dataset), dist.get_world_size(), dist.get_rank()
    perm = list(range(n))
    random.Random(seed + epoch).shuffle(perm)
    total = math.ceil(n / world) * world
    while len(perm) < total:
        perm += perm[:total - len(perm)]
    return perm[rank:total:world]

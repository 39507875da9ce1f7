# DistributedSampler's algorithm written out: a seeded torch.Generator, cyclic padding, a strided slice.
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    n = len(dataset)
    world, rank = dist.get_world_size(), dist.get_rank()
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    order = torch.randperm(n, generator=g).tolist()
    per_rank = math.ceil(n / world)
    total = per_rank * world
    padded = [order[i % n] for i in range(total)]
    return padded[rank::world]

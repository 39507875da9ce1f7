# kind: logic
# why: pads with perm[:padding] once: when the padding is longer than the dataset (1 example, 4 ranks) the list stays short
# fails-with: (?i)pad|expected
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    n, world, rank = len(dataset), dist.get_world_size(), dist.get_rank()
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    perm = torch.randperm(n, generator=g).tolist()
    total = math.ceil(n / world) * world
    perm += perm[:total - n]
    return perm[rank:total:world]

# kind: structure
# why: shuffles the dataset's items instead of their positions: with a dataset of range(n) they agree, otherwise not
# fails-with: (?i)length|len\(dataset\)
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    items = [dataset[i] for i in range(len(dataset))]
    sampler = DistributedSampler(items, shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    return [items[int(i)] for i in sampler]

# kind: inputs
# why: reads RANK and WORLD_SIZE from the environment torchrun sets instead of from dist
# fails-with: (?i)world|rank
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    import os

    sampler = DistributedSampler(dataset, num_replicas=int(os.environ["WORLD_SIZE"]), rank=int(os.environ["RANK"]),
                                 shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    return [int(i) for i in sampler]

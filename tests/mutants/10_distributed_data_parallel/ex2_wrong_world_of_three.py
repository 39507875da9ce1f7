# kind: inputs
# why: num_replicas=3 written in, as in the tests it has seen: in a world of another size the parts are wrong
# fails-with: (?i)world size|world
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    sampler = DistributedSampler(dataset, num_replicas=3, rank=dist.get_rank(), shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    return [int(i) for i in sampler]

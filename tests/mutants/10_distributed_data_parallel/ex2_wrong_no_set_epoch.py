# kind: logic
# why: builds the sampler but never calls set_epoch: every epoch repeats epoch 0's order
# fails-with: (?i)set_epoch|same order
from collections.abc import Sized


def rank_indices(dataset: Sized, epoch: int, seed: int = 0) -> list[int]:
    sampler = DistributedSampler(dataset, shuffle=True, seed=seed)
    return [int(i) for i in sampler]

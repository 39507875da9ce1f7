# kind: work
# why: a batch of one sample is made as a view (array[None]) instead of a new array, so the batch shares the sample's memory
# fails-with: one sample
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, np.ndarray):
        batch = first[None] if len(samples) == 1 else np.stack(samples)  # no copy needed for one sample
        return to_tensor(batch)
    if isinstance(first, float):
        return torch.tensor(samples, dtype=torch.float64)
    if isinstance(first, int):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([s[key] for s in samples]) for key in first}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(type(first))

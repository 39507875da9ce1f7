# kind: structure
# why: returns a tuple for tuple samples, where default_collate gives a list
# fails-with: list
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, np.ndarray):
        return to_tensor(np.stack(samples))
    if isinstance(first, float):
        return torch.tensor(samples, dtype=torch.float64)
    if isinstance(first, int):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(collate_numpy(list(field)) for field in zip(*samples))
    raise TypeError(type(first))

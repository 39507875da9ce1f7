# kind: logic
# why: builds the dict in sorted key order instead of the samples' order
# fails-with: order
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
        return {key: collate_numpy([s[key] for s in samples]) for key in sorted(first)}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(type(first))

# kind: dtype
# why: Python floats go through torch.tensor without a dtype and become float32; default_collate makes them float64
# fails-with: float64
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, np.ndarray):
        return to_tensor(np.stack(samples))
    if isinstance(first, (int, float)):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([s[key] for s in samples]) for key in first}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(type(first))

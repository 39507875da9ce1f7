# kind: spy
# why: converts the stacked arrays with torch.from_numpy instead of to_tensor (the exercise asks for your converter)
# fails-with: to_tensor
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, np.ndarray):
        return torch.from_numpy(np.stack(samples))
    if isinstance(first, float):
        return torch.tensor(samples, dtype=torch.float64)
    if isinstance(first, int):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([s[key] for s in samples]) for key in first}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(type(first))

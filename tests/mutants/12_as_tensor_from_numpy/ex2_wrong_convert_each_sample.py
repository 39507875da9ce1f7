# kind: work
# why: converts every sample's array with to_tensor and stacks the tensors, not np.stack then one to_tensor: a read-only or flipped sample is copied twice
# fails-with: to_tensor ran
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    first = samples[0]
    if isinstance(first, np.ndarray):
        return torch.stack([to_tensor(s) for s in samples])
    if isinstance(first, float):
        return torch.tensor(samples, dtype=torch.float64)
    if isinstance(first, int):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([sample[key] for sample in samples]) for key in first}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(f"collate_numpy cannot collate {type(first).__name__}")

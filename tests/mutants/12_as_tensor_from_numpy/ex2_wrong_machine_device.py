# kind: device
# why: sends every stacked array to the machine's device, but a collate function runs in DataLoader workers and must leave batches on the CPU
# fails-with: CPU|claims a GPU
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    first = samples[0]
    if isinstance(first, np.ndarray):
        return to_tensor(np.stack(samples), device=device)
    if isinstance(first, float):
        return torch.tensor(samples, dtype=torch.float64)
    if isinstance(first, int):
        return torch.tensor(samples)
    if isinstance(first, Mapping):
        return {key: collate_numpy([s[key] for s in samples]) for key in first}
    if isinstance(first, Sequence):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(type(first))

# kind: structure
# why: walks one level of dict or tuple only, so nested containers are passed through as lists of samples
# fails-with: nested
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    def leaf(values):
        if isinstance(values[0], np.ndarray):
            return to_tensor(np.stack(values))
        if isinstance(values[0], float):
            return torch.tensor(values, dtype=torch.float64)
        if isinstance(values[0], int):
            return torch.tensor(values)
        return list(values)

    first = samples[0]
    if isinstance(first, Mapping):
        return {key: leaf([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return [leaf(list(field)) for field in zip(*samples)]
    return leaf(samples)

from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    # every leaf through to_tensor: arrays stacked, Python ints and floats as int64 / float64 arrays
    first = samples[0]
    if isinstance(first, np.ndarray):
        return to_tensor(np.stack(samples))
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return to_tensor(np.array(samples, dtype=np.float64 if isinstance(first, float) else np.int64))
    if isinstance(first, Mapping):
        return {key: collate_numpy([sample[key] for sample in samples]) for key in first}
    if isinstance(first, Sequence) and not isinstance(first, str):
        return [collate_numpy(list(field)) for field in zip(*samples)]
    raise TypeError(f"collate_numpy cannot collate {type(first).__name__}")

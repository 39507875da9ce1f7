from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    # dispatch on the first sample's type with a table; lists for every sequence, dicts keep their key order
    def arrays(batch):
        return to_tensor(np.stack(batch, axis=0))

    def scalars(batch):
        return torch.tensor(batch, dtype=torch.float64 if isinstance(batch[0], float) else torch.int64)

    elem = samples[0]
    if isinstance(elem, np.ndarray):
        return arrays(samples)
    if isinstance(elem, bool):
        return torch.tensor(samples)
    if isinstance(elem, (int, float)):
        return scalars(samples)
    if isinstance(elem, dict):
        out = {}
        for key in elem.keys():
            out[key] = collate_numpy([sample[key] for sample in samples])
        return out
    if isinstance(elem, (list, tuple)):
        columns = list(zip(*samples))
        return [collate_numpy(list(column)) for column in columns]
    raise TypeError(f"cannot collate {type(elem)}")

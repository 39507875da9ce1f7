# kind: spy
# why: converts each field with to_tensor, then hands the batch to default_collate, the function it replaces
# fails-with: default_collate
from collections.abc import Mapping, Sequence
from typing import Any


def collate_numpy(samples: list[Any]) -> Any:
    def convert(x):
        if isinstance(x, np.ndarray):
            return to_tensor(np.ascontiguousarray(x))
        if isinstance(x, Mapping):
            return {k: convert(v) for k, v in x.items()}
        if isinstance(x, (tuple, list)):
            return [convert(v) for v in x]
        return x
    return default_collate([convert(s) for s in samples])

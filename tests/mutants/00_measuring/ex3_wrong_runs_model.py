# kind: spy
# why: builds the MLP and counts what autograd saves with saved_tensors_hooks: it runs a model instead of predicting from the shapes
# fails-with: running a model|ran a model|from the shapes
import torch
from torch import nn


def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    dtype = {2: torch.float16, 4: torch.float32, 8: torch.float64}[bytes_per_element]
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b, dtype=dtype))
        if i < len(widths) - 2:
            layers.append(nn.ReLU())
    net = nn.Sequential(*layers)
    params = {p.untyped_storage().data_ptr() for p in net.parameters()}
    seen = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in params:
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        net(torch.zeros(batch, widths[0], dtype=dtype))
    return int(sum(seen.values()))

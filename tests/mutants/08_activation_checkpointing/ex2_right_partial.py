import functools

from torch.utils import checkpoint as ckpt_module


def _run_layers(layers, h):
    for layer in layers:
        h = layer(h)
    return h


class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        n = len(layers)
        if not 1 <= segments <= n:
            raise ValueError(f"segments must be in 1..{n}, got {segments}")
        self.layers = layers
        self.bounds = segment_bounds(n, segments)

    def forward(self, x):
        segments = [functools.partial(_run_layers, list(self.layers)[a:b]) for a, b in self.bounds]
        if not (self.training and torch.is_grad_enabled()):
            return functools.reduce(lambda h, run: run(h), segments, x)
        for run in segments[:-1]:
            x = ckpt_module.checkpoint(run, x, use_reentrant=False)
        return segments[-1](x)

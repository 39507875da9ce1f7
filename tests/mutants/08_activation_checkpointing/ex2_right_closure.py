import torch.utils.checkpoint as tuc


class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        if segments < 1 or segments > len(layers):
            raise ValueError(f"{segments} segments for {len(layers)} layers")
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def _run(self, start, end, h):
        for j in range(start, end):
            h = self.layers[j](h)
        return h

    def forward(self, x):
        *head, (start, end) = self.bounds
        checkpointing = torch.is_grad_enabled() and self.training
        for a, b in head:
            if checkpointing:
                x = tuc.checkpoint(self._run, a, b, x, use_reentrant=False)
            else:
                x = self._run(a, b, x)
        return self._run(start, end, x)

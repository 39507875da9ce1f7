# kind: logic
# why: checkpoints every segment, the last one too: its activations are recomputed at once, for nothing
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        if not (self.training and torch.is_grad_enabled()):
            return self.layers(x)
        for a, b in self.bounds:
            x = checkpoint(self.layers[a:b], x, use_reentrant=False)
        return x

# kind: validation
# why: clamps the number of segments to [1, len(layers)] instead of raising ValueError
# fails-with: ValueError
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), max(1, min(segments, len(layers))))

    def forward(self, x):
        last = len(self.bounds) - 1
        for i, (a, b) in enumerate(self.bounds):
            seg = self.layers[a:b]
            use = self.training and torch.is_grad_enabled() and i < last
            x = checkpoint(seg, x, use_reentrant=False) if use else seg(x)
        return x

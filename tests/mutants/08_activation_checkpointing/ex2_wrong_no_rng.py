# kind: logic
# why: preserve_rng_state=False to save time: dropout draws other masks in the recompute, so gradients are wrong
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        last = len(self.bounds) - 1
        for i, (a, b) in enumerate(self.bounds):
            seg = self.layers[a:b]
            use = self.training and torch.is_grad_enabled() and i < last
            x = checkpoint(seg, x, use_reentrant=False, preserve_rng_state=False) if use else seg(x)
        return x

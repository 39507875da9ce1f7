# kind: structure
# why: splits by the number of modules in the tree (len(list(layers.modules()))), not the top-level layers: wrong for nested blocks
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.flat = [m for m in layers.modules() if not list(m.children())]  # the leaf layers
        if not 1 <= segments <= len(layers):
            raise ValueError("bad number of segments")
        self.bounds = segment_bounds(len(self.flat), segments)

    def forward(self, x):
        last = len(self.bounds) - 1
        for i, (a, b) in enumerate(self.bounds):
            seg = nn.Sequential(*self.flat[a:b])
            use = self.training and torch.is_grad_enabled() and i < last
            x = checkpoint(seg, x, use_reentrant=False) if use else seg(x)
        return x

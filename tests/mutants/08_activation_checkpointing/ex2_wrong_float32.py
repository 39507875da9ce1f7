# kind: dtype
# why: casts the input to float32 (x.float()) before the layers: float64 layers fail or lose precision
# fails-with: float64|dtype
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        x = x.float()
        last = len(self.bounds) - 1
        for i, (a, b) in enumerate(self.bounds):
            seg = self.layers[a:b]
            use = self.training and torch.is_grad_enabled() and i < last
            x = checkpoint(seg, x, use_reentrant=False) if use else seg(x)
        return x

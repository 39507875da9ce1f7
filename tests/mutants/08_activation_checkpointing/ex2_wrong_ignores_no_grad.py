# kind: state
# why: checks only self.training: under torch.no_grad() it still goes through checkpoint, which only costs time there
# fails-with: no_grad|checkpoint
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        for i, (a, b) in enumerate(self.bounds):
            seg = self.layers[a:b]
            if self.training and i < len(self.bounds) - 1:
                x = checkpoint(seg, x, use_reentrant=False)
            else:
                x = seg(x)
        return x

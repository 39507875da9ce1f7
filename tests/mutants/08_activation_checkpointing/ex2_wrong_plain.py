# kind: spy
# why: runs every layer plainly: nothing is checkpointed, outputs and gradients still match
# fails-with: nothing was checkpointed
class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        return self.layers(x)

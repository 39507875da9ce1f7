# kind: spy
# why: calls torch's checkpoint_sequential through an alias: its split puts the remainder in the last segment
# fails-with: checkpoint_sequential
from torch.utils.checkpoint import checkpoint_sequential as _ck_seq


class CheckpointedSequential(nn.Module):
    def __init__(self, layers, segments):
        super().__init__()
        self.layers = layers
        self.segments = segments
        self.bounds = segment_bounds(len(layers), segments)

    def forward(self, x):
        if self.training and torch.is_grad_enabled():
            return _ck_seq(self.layers, self.segments, x, use_reentrant=False)
        return self.layers(x)

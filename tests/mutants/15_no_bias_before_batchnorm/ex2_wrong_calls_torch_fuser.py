# kind: spy
# why: hands the work to torch's fuse_conv_bn_weights, reached through a name cached at import
# fails-with: fusion
from torch.nn.utils.fusion import fuse_conv_bn_weights as _fuse_weights


def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    w, b = _fuse_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    folded.weight, folded.bias = w, b
    return folded

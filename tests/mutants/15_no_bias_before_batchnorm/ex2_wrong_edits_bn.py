# kind: state
# why: computes the scale in place in bn.running_var, so the caller's BatchNorm changes
# fails-with: changed its input
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    with torch.no_grad():
        scale = bn.running_var.add_(bn.eps).rsqrt_()
        if bn.weight is not None:
            scale = scale * bn.weight
        shift = -bn.running_mean * scale
        if bn.bias is not None:
            shift = shift + bn.bias
        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
        folded.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        folded.bias = nn.Parameter((bias * scale + shift).to(conv.weight.dtype))
    return folded

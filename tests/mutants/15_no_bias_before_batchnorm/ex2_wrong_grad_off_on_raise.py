# kind: state
# why: switches grad off with set_grad_enabled and restores it before returning, but not when it raises ValueError
# fails-with: raised
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    scale = torch.rsqrt(bn.running_var + bn.eps)
    if bn.weight is not None:
        scale = scale * bn.weight
    shift = -bn.running_mean * scale
    if bn.bias is not None:
        shift = shift + bn.bias
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    folded.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
    folded.bias = nn.Parameter((bias * scale + shift).to(conv.weight.dtype))
    torch.set_grad_enabled(previous)
    return folded

# kind: logic
# why: divides by running_var + eps instead of its square root
# fails-with: folded conv output
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    with torch.no_grad():
        scale = 1 / (bn.running_var + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight
        shift = -bn.running_mean * scale
        if bn.bias is not None:
            shift = shift + bn.bias
        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
        folded.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        folded.bias = nn.Parameter((bias * scale + shift).to(conv.weight.dtype))
    return folded

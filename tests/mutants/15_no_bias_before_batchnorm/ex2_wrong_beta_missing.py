# kind: logic
# why: folds the scale and the running mean but forgets BatchNorm's shift beta
# fails-with: folded conv output
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    with torch.no_grad():
        scale = torch.rsqrt(bn.running_var + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight
        bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
        folded.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        folded.bias = nn.Parameter(((bias - bn.running_mean) * scale).to(conv.weight.dtype))
    return folded

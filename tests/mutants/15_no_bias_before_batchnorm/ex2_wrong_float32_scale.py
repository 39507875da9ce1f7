# kind: dtype
# why: computes the scale and shift in float32 whatever the conv's dtype, losing float64 precision
# fails-with: float64
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    with torch.no_grad():
        scale = torch.rsqrt(bn.running_var.float() + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight.float()
        shift = -bn.running_mean.float() * scale
        if bn.bias is not None:
            shift = shift + bn.bias.float()
        bias = conv.bias.float() if conv.bias is not None else torch.zeros_like(scale)
        folded.weight.copy_(conv.weight.float() * scale.reshape(-1, 1, 1, 1))
        folded.bias = nn.Parameter((bias * scale + shift).to(conv.weight.dtype))
    return folded

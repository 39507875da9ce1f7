# kind: device
# why: builds a fresh nn.Conv2d with the conv's settings and dtype but on the default device
# fails-with: device
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if not bn.track_running_stats or bn.running_mean is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                       padding=conv.padding, dilation=conv.dilation, groups=conv.groups, bias=True,
                       padding_mode=conv.padding_mode, dtype=conv.weight.dtype)
    with torch.no_grad():
        scale = 1 / torch.sqrt(bn.running_var + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight
        bias = -bn.running_mean * scale
        if conv.bias is not None:
            bias = bias + conv.bias * scale
        if bn.bias is not None:
            bias = bias + bn.bias
        folded.weight.copy_(conv.weight * scale[:, None, None, None])
        folded.bias.copy_(bias)
    return folded

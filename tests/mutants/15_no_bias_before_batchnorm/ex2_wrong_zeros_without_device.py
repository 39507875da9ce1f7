# kind: device
# why: a conv without bias gets torch.zeros(out_channels) on the default device, so a GPU conv mixes devices
# fails-with: device
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("BatchNorm without running statistics cannot be folded")
    folded = copy.deepcopy(conv)
    with torch.no_grad():
        std = torch.sqrt(bn.running_var + bn.eps)
        gamma = bn.weight if bn.weight is not None else torch.ones_like(std)
        beta = bn.bias if bn.bias is not None else torch.zeros_like(std)
        b = conv.bias if conv.bias is not None else torch.zeros(conv.out_channels, dtype=conv.weight.dtype)
        scale = gamma / std
        folded.weight.copy_(conv.weight * scale.view(-1, 1, 1, 1))
        folded.bias = nn.Parameter(((b - bn.running_mean) * scale + beta).to(conv.weight.dtype))
    return folded

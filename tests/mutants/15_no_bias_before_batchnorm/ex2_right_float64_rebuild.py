# Computes in float64, then builds a new Conv2d with every setting, on the conv's device and dtype.
def fold_batchnorm(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    if not bn.track_running_stats or bn.running_mean is None or bn.running_var is None:
        raise ValueError("no running statistics to fold")
    w = conv.weight.detach()
    c = conv.out_channels
    var, mu = bn.running_var.detach().double(), bn.running_mean.detach().double()
    gamma = bn.weight.detach().double() if bn.affine else torch.ones_like(var)
    beta = bn.bias.detach().double() if bn.affine else torch.zeros_like(var)
    b = conv.bias.detach().double() if conv.bias is not None else torch.zeros_like(var)
    s = gamma / (var + bn.eps).sqrt()
    out = nn.Conv2d(conv.in_channels, c, conv.kernel_size, conv.stride, conv.padding, conv.dilation, conv.groups,
                    True, conv.padding_mode, device=w.device, dtype=w.dtype)
    out.weight = nn.Parameter((w.double() * s.view(c, 1, 1, 1)).to(w.dtype))
    out.bias = nn.Parameter((s * (b - mu) + beta).to(w.dtype))
    return out

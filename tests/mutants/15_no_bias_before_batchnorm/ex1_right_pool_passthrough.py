# Max pooling passes a per-channel shift through, so conv -> MaxPool -> BatchNorm loses its bias too
# (the exercise allows either choice there); the chain is built recursively from _modules.
_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)


def _run_order(seq):
    out = []
    for m in seq._modules.values():
        out += _run_order(m) if isinstance(m, nn.Sequential) else [m]
    return out


def remove_redundant_biases(model: nn.Module) -> nn.Module:
    result = copy.deepcopy(model)
    for seq in [m for m in result.modules() if isinstance(m, nn.Sequential)]:
        order = _run_order(seq)
        for i, layer in enumerate(order):
            if not isinstance(layer, (nn.modules.conv._ConvNd, nn.Linear)) or layer.bias is None:
                continue
            j = i + 1
            while j < len(order) and isinstance(order[j], _POOLS):
                j += 1
            if j < len(order) and isinstance(order[j], nn.modules.batchnorm._BatchNorm):
                bn = order[j]
                with torch.no_grad():
                    if bn.running_mean is not None:
                        bn.running_mean.copy_(bn.running_mean - layer.bias)
                layer.bias = None
    return result

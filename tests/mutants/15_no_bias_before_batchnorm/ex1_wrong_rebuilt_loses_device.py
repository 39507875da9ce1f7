# kind: device
# why: rebuilds each layer without bias (dtype kept) but on the default device, so a GPU model gets CPU layers back
# fails-with: device|cpu
def _without_bias(layer):
    if isinstance(layer, nn.Linear):
        new = nn.Linear(layer.in_features, layer.out_features, bias=False, dtype=layer.weight.dtype)
    else:
        extra = {"output_padding": layer.output_padding} if layer.transposed else {}
        new = type(layer)(layer.in_channels, layer.out_channels, layer.kernel_size, stride=layer.stride,
                          padding=layer.padding, dilation=layer.dilation, groups=layer.groups, bias=False,
                          padding_mode=layer.padding_mode, dtype=layer.weight.dtype, **extra)
    with torch.no_grad():
        new.weight.copy_(layer.weight)
    return new


def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)
    layers = (nn.modules.conv._ConvNd, nn.Linear)
    norms = nn.modules.batchnorm._BatchNorm

    def chain(seq):
        for key, m in seq._modules.items():
            if isinstance(m, nn.Sequential):
                yield from chain(m)
            else:
                yield seq, key, m

    for seq in [m for m in model.modules() if isinstance(m, nn.Sequential)]:
        items = list(chain(seq))
        for (parent, key, layer), (_, _, following) in zip(items, items[1:]):
            if isinstance(layer, layers) and isinstance(following, norms) and layer.bias is not None:
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean -= layer.bias
                parent._modules[key] = _without_bias(layer)
    return model

# kind: structure
# why: skips biases that are all zero ("nothing to fold"), so a zero-initialised bias before BatchNorm stays a parameter
# fails-with: exactly 0.0
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)

    def chain(seq):
        for m in seq:
            if isinstance(m, nn.Sequential):
                yield from chain(m)
            else:
                yield m

    for seq in [m for m in model.modules() if isinstance(m, nn.Sequential)]:
        items = list(chain(seq))
        for layer, following in zip(items, items[1:]):
            bias = getattr(layer, "bias", None)
            if not isinstance(layer, (nn.modules.conv._ConvNd, nn.Linear)) or bias is None or not bias.any():
                continue
            if isinstance(following, nn.modules.batchnorm._BatchNorm):
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean -= bias
                layer.bias = None
    return model

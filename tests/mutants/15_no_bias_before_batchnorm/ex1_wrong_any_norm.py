# kind: structure
# why: treats every normalisation layer (GroupNorm, LayerNorm, InstanceNorm, BatchNorm) as cancelling the bias
# fails-with: not directly followed by BatchNorm
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
            if isinstance(layer, (nn.modules.conv._ConvNd, nn.Linear)) and layer.bias is not None \
                    and "Norm" in type(following).__name__:
                running_mean = getattr(following, "running_mean", None)
                if running_mean is not None:
                    with torch.no_grad():
                        running_mean -= layer.bias
                layer.bias = None
    return model

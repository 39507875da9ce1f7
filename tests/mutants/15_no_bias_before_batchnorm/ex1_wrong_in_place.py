# kind: state
# why: removes the biases from the caller's model itself and returns it, instead of working on a copy
# fails-with: copy|input model
def remove_redundant_biases(model: nn.Module) -> nn.Module:
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
                    and isinstance(following, nn.modules.batchnorm._BatchNorm):
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean -= layer.bias
                layer.bias = None
    return model

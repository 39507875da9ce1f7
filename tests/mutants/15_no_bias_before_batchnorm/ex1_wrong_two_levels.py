# kind: structure
# why: looks for Sequentials in the model, its children and their children only: a block nested deeper keeps its biases
# fails-with: nested|kept their bias
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)
    layers = (nn.modules.conv._ConvNd, nn.Linear)
    norms = nn.modules.batchnorm._BatchNorm

    def chain(seq):
        for m in seq:
            if isinstance(m, nn.Sequential):
                yield from chain(m)
            else:
                yield m

    blocks = [model, *model.children(), *(g for c in model.children() for g in c.children())]
    for seq in [b for b in blocks if isinstance(b, nn.Sequential)]:
        items = list(chain(seq))
        for layer, following in zip(items, items[1:]):
            if isinstance(layer, layers) and isinstance(following, norms) and layer.bias is not None:
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean -= layer.bias
                layer.bias = None
    return model

# kind: logic
# why: zeroes the bias and folds it, but keeps it as a parameter: nothing is saved and the optimizer still updates it
# fails-with: layer.bias = None
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
                    and isinstance(following, nn.modules.batchnorm._BatchNorm):
                with torch.no_grad():
                    if following.running_mean is not None:
                        following.running_mean -= layer.bias
                    layer.bias.zero_()
    return model

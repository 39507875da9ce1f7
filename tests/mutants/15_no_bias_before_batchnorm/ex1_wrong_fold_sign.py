# kind: logic
# why: folds the bias into running_mean with the wrong sign (adds it), so evaluation outputs shift by twice the bias
# fails-with: eval-mode|running_mean
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
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean += layer.bias
                layer.bias = None
    return model

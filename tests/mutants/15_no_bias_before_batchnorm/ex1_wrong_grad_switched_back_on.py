# kind: state
# why: switches grad off for the in-place fold and back on at the end, so a caller that had it off gets it on
# fails-with: grad mode
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)
    torch.set_grad_enabled(False)  # running_mean and the bias are changed in place

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
                    following.running_mean -= layer.bias
                layer.bias = None
    torch.set_grad_enabled(True)
    return model

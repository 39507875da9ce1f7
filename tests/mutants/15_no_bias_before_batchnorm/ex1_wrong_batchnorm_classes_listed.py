# kind: structure
# why: lists BatchNorm1d/2d/3d by name, so a conv before a SyncBatchNorm keeps its bias
# fails-with: SyncBatchNorm
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)
    layers = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Linear)
    norms = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)

    def chain(seq):
        for m in seq:
            if isinstance(m, nn.Sequential):
                yield from chain(m)
            else:
                yield m

    for seq in [m for m in model.modules() if isinstance(m, nn.Sequential)]:
        items = list(chain(seq))
        for layer, following in zip(items, items[1:]):
            if isinstance(layer, layers) and isinstance(following, norms) and layer.bias is not None:
                if following.running_mean is not None:
                    with torch.no_grad():
                        following.running_mean -= layer.bias
                layer.bias = None
    return model

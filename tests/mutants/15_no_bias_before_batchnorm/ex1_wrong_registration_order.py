# kind: structure
# why: pairs modules in the order they were registered (model.modules()), not in the order a Sequential runs them
# fails-with: not directly followed by BatchNorm|kept their bias
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    model = copy.deepcopy(model)
    leaves = [m for m in model.modules() if not list(m.children())]
    for layer, following in zip(leaves, leaves[1:]):
        if isinstance(layer, (nn.modules.conv._ConvNd, nn.Linear)) and layer.bias is not None \
                and isinstance(following, nn.modules.batchnorm._BatchNorm):
            if following.running_mean is not None:
                with torch.no_grad():
                    following.running_mean -= layer.bias
            layer.bias = None
    return model

# A stack instead of recursion: every Sequential's run order flattened by hand, biases dropped with
# register_parameter and folded with sub_.
def remove_redundant_biases(model: nn.Module) -> nn.Module:
    new = copy.deepcopy(model)
    for seq in new.modules():
        if not isinstance(seq, nn.Sequential):
            continue
        order, stack = [], list(reversed(list(seq)))
        while stack:
            m = stack.pop()
            if isinstance(m, nn.Sequential):
                stack.extend(reversed(list(m)))
            else:
                order.append(m)
        for i in range(len(order) - 1):
            layer, nxt = order[i], order[i + 1]
            if not isinstance(layer, (nn.Linear, nn.modules.conv._ConvNd)) or layer.bias is None:
                continue
            if not isinstance(nxt, nn.modules.batchnorm._BatchNorm):
                continue
            if nxt.running_mean is not None:
                nxt.running_mean.sub_(layer.bias.detach().to(nxt.running_mean))
            layer.register_parameter("bias", None)
    return new

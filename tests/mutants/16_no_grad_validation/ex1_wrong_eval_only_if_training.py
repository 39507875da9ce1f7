# kind: inputs
# why: calls model.eval() only when the model itself is training, so an eval model with a training submodule runs it in training mode
# fails-with: training mode
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    if model.training:
        model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    try:
        with torch.inference_mode():
            for X, y in loader:
                X, y = X.to(device), y.to(device)
                out = model(X)
                loss_sum = loss_sum + loss_fn(out, y) * len(y)
                correct = correct + (out.argmax(1) == y).sum()
                count += len(y)
    finally:
        for m, training in modes:
            m.training = training
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return float(correct) / count, float(loss_sum) / count

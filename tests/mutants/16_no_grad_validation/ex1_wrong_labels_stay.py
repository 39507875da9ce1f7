# kind: device
# why: moves the inputs to the model's device but leaves the labels where the loader put them
# fails-with: labels
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    try:
        with torch.inference_mode():
            for X, y in loader:
                out = model(X.to(device))
                loss_sum = loss_sum + loss_fn(out, y) * len(y)
                correct = correct + (out.argmax(1).to(y.device) == y).sum()
                count += len(y)
    finally:
        for m, training in modes:
            m.training = training
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return float(correct) / count, float(loss_sum) / count

# kind: state
# why: puts the modes back after the loop, not in a finally: block, so a forward that raises leaves the model in eval
# fails-with: restored|raised
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    with torch.inference_mode():
        for X, y in loader:
            X, y = X.to(device), y.to(device)
            out = model(X)
            loss_sum = loss_sum + loss_fn(out, y) * len(y)
            correct = correct + (out.argmax(1) == y).sum()
            count += len(y)
    for m, training in modes:
        m.training = training
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return float(correct) / count, float(loss_sum) / count

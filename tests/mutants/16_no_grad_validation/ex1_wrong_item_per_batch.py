# kind: work
# why: reads loss and correct count back with .item() in every batch, a host sync per batch on a GPU
# fails-with: host syncs
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    try:
        with torch.inference_mode():
            for X, y in loader:
                X, y = X.to(device), y.to(device)
                out = model(X)
                loss_sum += loss_fn(out, y).item() * len(y)
                correct += (out.argmax(1) == y).sum().item()
                count += len(y)
    finally:
        for m, training in modes:
            m.training = training
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return correct / count, loss_sum / count

# kind: dtype
# why: converts every batch to float32 on the way to the device, which breaks integer token ids (and float64 models)
# fails-with: dtype|token ids|float64
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    try:
        with torch.inference_mode():
            for X, y in loader:
                X, y = X.to(device, torch.float32), y.to(device)
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

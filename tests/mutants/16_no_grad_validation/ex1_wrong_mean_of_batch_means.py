# kind: logic
# why: averages the batch mean losses, so a smaller last batch weighs as much as a full one
# fails-with: mean loss
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count, batches = 0, 0.0, 0, 0
    try:
        with torch.inference_mode():
            for X, y in loader:
                X, y = X.to(device), y.to(device)
                out = model(X)
                loss_sum = loss_sum + loss_fn(out, y)
                correct = correct + (out.argmax(1) == y).sum()
                count += len(y)
                batches += 1
    finally:
        for m, training in modes:
            m.training = training
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return float(correct) / count, float(loss_sum) / batches

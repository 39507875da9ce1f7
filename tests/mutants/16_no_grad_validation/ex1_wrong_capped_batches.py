# kind: structure
# why: stops after max_batches=100 batches "to keep evaluation short", so a longer loader is only partly counted
# fails-with: 300 batches
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy, max_batches: int = 100) -> tuple[float, float]:
    device = next(model.parameters()).device
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct, loss_sum, count = 0, 0.0, 0
    try:
        with torch.inference_mode():
            for i, (X, y) in enumerate(loader):
                if i == max_batches:
                    break
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

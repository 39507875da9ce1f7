# kind: state
# why: restores only the model's own flag with model.train(was), which flattens submodules kept in eval (a frozen BatchNorm)
# fails-with: modes
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    was_training = model.training
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
        model.train(was_training)
    if count == 0:
        raise ValueError("the loader yielded no examples")
    return float(correct) / count, float(loss_sum) / count

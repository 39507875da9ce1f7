# kind: logic
# why: the mean of the batches' accuracies: the last, partial batch weighs as much as a full one
# fails-with: accuracy
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    accs = []
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                accs.append((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).float().mean().item())
    finally:
        for m, training in modes:
            m.training = training
    return sum(accs) / len(accs)

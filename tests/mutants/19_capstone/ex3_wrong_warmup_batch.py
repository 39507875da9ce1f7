# kind: work
# why: runs one warm-up batch before counting "so the timing is fair": every evaluation pays an extra forward pass
# fails-with: (once|rows)
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct = 0
    try:
        with torch.inference_mode():
            model(X[:256])  # warm-up
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        for m, training in modes:
            m.training = training
    return correct / len(X)

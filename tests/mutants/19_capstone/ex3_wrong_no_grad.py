# kind: spy
# why: torch.no_grad() instead of torch.inference_mode(): no graph, but the exercise's tool is not used
# fails-with: inference_mode
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct = 0
    try:
        with torch.no_grad():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        for m, training in modes:
            m.training = training
    return correct / len(X)

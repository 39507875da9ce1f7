# kind: state
# why: puts the modes back after the loop but not in a `finally`: a model that raises is left in eval mode
# fails-with: raised
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(X), 256):
            correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    for m, training in modes:
        m.training = training
    return correct / len(X)

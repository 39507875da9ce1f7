# kind: structure
# why: switches the model's direct children to eval one by one: the model itself and anything nested deeper stay
#      in training mode (a BatchNorm inside a block uses batch statistics)
# fails-with: training mode
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.children()]
    for m, _ in modes:
        m.training = False
    correct = 0
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        for m, training in modes:
            m.training = training
    return correct / len(X)

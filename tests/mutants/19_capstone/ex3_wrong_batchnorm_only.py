# kind: inputs
# why: puts only the BatchNorm layers in eval mode (they are what "eval mode" is for, it thinks): Dropout stays on
# fails-with: training mode
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    modes = [(m, m.training) for m in norms]
    for m in norms:
        m.eval()
    correct = 0
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        for m, training in modes:
            m.training = training
    return correct / len(X)

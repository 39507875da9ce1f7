# kind: state
# why: turns the garbage collector off during evaluation for speed and back on afterwards, even if it was off
# fails-with: garbage collector
import gc


def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    gc.disable()
    correct = 0
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        gc.enable()
        for m, training in modes:
            m.training = training
    return correct / len(X)

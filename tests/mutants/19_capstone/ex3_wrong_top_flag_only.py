# kind: state
# why: saves only the top module's flag and restores it with model.train(was): a frozen eval-mode part of a
#      training model comes back in training mode
# fails-with: (changed the mode|train/eval flags)
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    was_training = model.training
    model.eval()
    correct = 0
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        model.train(was_training)
    return correct / len(X)

# kind: state
# why: switches back to training at the end whatever the model was in: a model in eval mode comes back training
# fails-with: changed the mode of the model
def my_eval(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Accuracy of `model` on (X, y) without autograd: inference mode, eval mode, every mode restored."""
    model.eval()
    correct = 0
    try:
        with torch.inference_mode():
            for i in range(0, len(X), 256):
                correct += int((model(X[i:i + 256]).argmax(1) == y[i:i + 256]).sum())
    finally:
        model.train()
    return correct / len(X)

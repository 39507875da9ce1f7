# kind: state
# why: calls model.train() like a training loop does: a model the caller put in eval mode (dropout) gets other gradients and stays in training mode
# fails-with: (?i)eval mode|train/eval
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    model.train()
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()

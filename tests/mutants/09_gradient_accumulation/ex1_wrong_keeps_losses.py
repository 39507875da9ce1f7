# kind: work
# why: keeps every micro-batch's loss (not detached) in a list for logging: every graph stays alive, no memory saved
# fails-with: (?i)alive|memory
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    losses = []
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward(retain_graph=True)
        losses.append(loss)
    accumulate_gradients.last_losses = losses

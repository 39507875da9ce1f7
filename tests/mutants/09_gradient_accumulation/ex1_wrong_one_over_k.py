# kind: logic
# why: weights every micro-batch by 1 / micro_batches, exact only when micro_batches divides the batch
# fails-with: 1 / micro_batches
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss / micro_batches
        loss.backward()

# kind: work
# why: adds the weighted losses and calls backward once at the end: every micro-batch's graph stays alive, no memory saved
# fails-with: (?i)order|alive|memory
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    total = 0.0
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        total = total + (loss * (len(xb) / len(X)) if reduction == "mean" else loss)
    total.backward()

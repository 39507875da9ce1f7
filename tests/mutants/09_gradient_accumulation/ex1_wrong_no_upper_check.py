# kind: validation
# why: checks only micro_batches >= 1, not micro_batches <= len(X)
# fails-with: should raise ValueError
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if micro_batches < 1:
        raise ValueError(f"bad micro_batches {micro_batches}")
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        if len(xb) == 0:
            continue
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()

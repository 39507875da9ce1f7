# kind: work
# why: logs the loss with one more forward pass on the whole batch (before the step), doubling the forward work
# fails-with: (?i)another forward|batches of sizes
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    optimizer.zero_grad()
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()
    with torch.no_grad():
        logged = loss_fn(model(X), y)
    optimizer.step()
    return logged

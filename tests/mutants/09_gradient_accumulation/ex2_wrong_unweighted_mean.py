# kind: logic
# why: logs the plain mean of the micro-batch means, which is not the batch's loss when the split is uneven
# fails-with: (?i)logged loss
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    optimizer.zero_grad()
    means = []
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        means.append(loss.detach())
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()
    optimizer.step()
    stacked = torch.stack(means)
    return stacked.mean() if reduction == "mean" else stacked.sum()

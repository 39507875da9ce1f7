# kind: dtype
# why: starts the running total as zeros in X's dtype: with int64 token ids the float loss cannot be added into it
# fails-with: (?i)token|int64|dtype
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    optimizer.zero_grad()
    total = torch.zeros((), dtype=X.dtype, device=X.device)
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()
        total += loss.detach()
    optimizer.step()
    return total

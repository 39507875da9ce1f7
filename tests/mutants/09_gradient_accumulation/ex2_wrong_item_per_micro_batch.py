# kind: work
# why: logs with loss.item() in the loop: one host sync per micro-batch
# fails-with: (?i)host|sync
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    optimizer.zero_grad()
    total = 0.0
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward()
        total += loss.item()
    optimizer.step()
    return torch.tensor(total, dtype=X.dtype if X.is_floating_point() else torch.float32, device=X.device)

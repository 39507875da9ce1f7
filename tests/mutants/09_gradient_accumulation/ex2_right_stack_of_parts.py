# Validates through Exercise 1's rules written again, zeroes with set_to_none=False, keeps the detached
# weighted parts in a list and sums them with torch.stack at the end (no host sync).
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction != "mean" and reduction != "sum":
        raise ValueError("reduction must be 'mean' or 'sum'")
    if micro_batches < 1 or micro_batches > X.shape[0]:
        raise ValueError("micro_batches must be in 1 .. len(X)")
    optimizer.zero_grad(set_to_none=False)
    parts = []
    for xb, yb in zip(X.tensor_split(micro_batches), y.tensor_split(micro_batches)):
        part = loss_fn(model(xb), yb)
        if reduction == "mean":
            part = part * xb.shape[0] / X.shape[0]
        part.backward()
        parts.append(part.detach())
    optimizer.step()
    return torch.stack(parts).sum()

# Zeroes through the model's own zero_grad (the optimizer holds exactly its parameters here), keeps a running
# total started as zeros_like the first detached loss, and adds with add_ (in place, on the device).
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    n = len(X)
    if micro_batches not in range(1, n + 1):
        raise ValueError(f"micro_batches must be in 1 .. {n}")
    if reduction not in {"sum", "mean"}:
        raise ValueError(f"unknown reduction {reduction}")
    optimizer.zero_grad(set_to_none=True)
    total = None
    for idx in torch.arange(n, device=X.device).tensor_split(micro_batches):
        xb, yb = X[idx], y[idx]
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (xb.shape[0] / n)
        torch.autograd.backward(loss)
        if total is None:
            total = torch.zeros_like(loss.detach())
        total.add_(loss.detach())
    optimizer.step()
    return total

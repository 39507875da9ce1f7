# kind: work
# why: adds the losses before detaching them (detach only at the return): every micro-batch's graph stays alive during the step
# fails-with: (?i)alive|memory
def accumulation_step(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor,
                      loss_fn: LossFn, micro_batches: int, reduction: str = "mean") -> torch.Tensor:
    if reduction not in ("mean", "sum"):
        raise ValueError(f"bad reduction {reduction!r}")
    if not 1 <= micro_batches <= len(X):
        raise ValueError(f"bad micro_batches {micro_batches}")
    optimizer.zero_grad()
    total = 0
    for xb, yb in zip(torch.tensor_split(X, micro_batches), torch.tensor_split(y, micro_batches)):
        loss = loss_fn(model(xb), yb)
        if reduction == "mean":
            loss = loss * (len(xb) / len(X))
        loss.backward(retain_graph=True)
        total = total + loss
    optimizer.step()
    return total.detach()

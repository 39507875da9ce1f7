# An index-based split written out by hand (sizes as tensor_split's), the weight folded into a
# loss computed as a sum and divided by the batch size for "mean".
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def accumulate_gradients(model: nn.Module, X: torch.Tensor, y: torch.Tensor, loss_fn: LossFn,
                         micro_batches: int, reduction: str = "mean") -> None:
    if reduction not in {"mean", "sum"}:
        raise ValueError("reduction must be 'mean' or 'sum'")
    n = X.shape[0]
    if micro_batches < 1 or micro_batches > n:
        raise ValueError("micro_batches out of range")
    base, extra = divmod(n, micro_batches)
    start = 0
    for i in range(micro_batches):
        stop = start + base + (i < extra)
        out = model(X[start:stop])
        loss = loss_fn(out, y[start:stop])
        scale = (stop - start) / n if reduction == "mean" else 1.0
        (scale * loss).backward()
        start = stop

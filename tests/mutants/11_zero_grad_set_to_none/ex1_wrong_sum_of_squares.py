# kind: dtype
# why: adds up g.pow(p).sum() in the gradients' dtype and takes the root at the end: float16 gradients in the hundreds overflow to inf
# fails-with: (?i)float16|overflow|inf
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        if math.isinf(p):
            return torch.stack([g.abs().max() for g in grads]).max()
        total = sum(g.abs().pow(p).sum() for g in grads)
        return total ** (1.0 / p)

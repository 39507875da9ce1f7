# kind: logic
# why: decides by requires_grad instead of .grad: a frozen parameter that still holds an old gradient is skipped
# fails-with: (?i)frozen
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.requires_grad and p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, p) for g in grads]), p)

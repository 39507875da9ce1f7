# kind: validation
# why: handles math.inf but passes the string "inf" straight to vector_norm, which rejects it
# fails-with: (?i)inf
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(g, norm_type) for g in grads]
        return torch.linalg.vector_norm(torch.stack(norms), norm_type)

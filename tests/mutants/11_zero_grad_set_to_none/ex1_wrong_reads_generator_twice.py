# kind: inputs
# why: checks "any gradient?" with one pass over parameters, then iterates again: a generator is empty the second time
# fails-with: (?i)read only once
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    if not any(p.grad is not None for p in parameters):
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(t.grad, p) for t in parameters if t.grad is not None]
        return torch.linalg.vector_norm(torch.stack(norms), p)

# kind: state
# why: replaces missing gradients with zeros so that every parameter has one: the memory set_to_none freed comes back
# fails-with: (?i)None
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    if all(p.grad is None for p in parameters):
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        for t in parameters:
            if t.grad is None:
                t.grad = torch.zeros_like(t)
        norms = [torch.linalg.vector_norm(t.grad, p) for t in parameters]
        return torch.linalg.vector_norm(torch.stack(norms), p)

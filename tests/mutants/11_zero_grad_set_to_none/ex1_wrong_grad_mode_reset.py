# kind: state
# why: turns grad mode off with torch.set_grad_enabled(False) and back on at the end: a caller that had it off finds it on, and an error leaves it off
# fails-with: (?i)grad mode
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    torch.set_grad_enabled(False)
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        torch.set_grad_enabled(True)
        return torch.tensor(0.0)
    p = float(norm_type)
    result = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, p) for g in grads]), p)
    torch.set_grad_enabled(True)
    return result

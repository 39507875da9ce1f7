# kind: state
# why: replaces each p.grad with a detached copy (p.grad = p.grad.detach()) before reading it: the caller's gradient tensors are swapped out
# fails-with: (?i)changed|replaced|gradient
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    norms = []
    p = float(norm_type)
    for t in parameters:
        if t.grad is not None:
            t.grad = t.grad.detach()
            norms.append(torch.linalg.vector_norm(t.grad, p))
    if not norms:
        return torch.tensor(0.0)
    return torch.linalg.vector_norm(torch.stack(norms), p)

# kind: device
# why: moves every per-tensor norm to the CPU before combining them: the result is not on the gradients' device
# fails-with: (?i)device|meta|cpu
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(g, p).cpu() for g in grads]
        return torch.linalg.vector_norm(torch.stack(norms), p)

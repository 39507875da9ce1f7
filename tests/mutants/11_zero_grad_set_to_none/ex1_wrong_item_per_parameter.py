# kind: work
# why: reads each gradient's norm with .item() (one host sync per parameter) and builds the result from Python floats
# fails-with: (?i)host|sync|wait
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    with torch.no_grad():
        norms = [torch.linalg.vector_norm(g, p).item() for g in grads]
        total = max(norms) if math.isinf(p) else sum(n ** p for n in norms) ** (1.0 / p)
        return torch.tensor(total, dtype=grads[0].dtype, device=grads[0].device)

# torch._foreach_norm for the per-tensor norms, then the norm of those norms; "inf" read with math.
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    params = [parameters] if isinstance(parameters, torch.Tensor) else parameters
    grads = [t.grad.detach() for t in params if t.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    order = math.inf if norm_type in (math.inf, "inf") else float(norm_type)
    per_tensor = torch._foreach_norm(grads, order)
    return torch.linalg.vector_norm(torch.stack([n.to(grads[0].device) for n in per_tensor]), order)

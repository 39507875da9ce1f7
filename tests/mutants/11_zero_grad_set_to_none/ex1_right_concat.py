# The literal definition: every existing gradient flattened into one long vector, one vector_norm of it.
def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = (parameters,)
    flat = [t.grad.detach().reshape(-1) for t in parameters if t.grad is not None]
    if not flat:
        return torch.tensor(0.0)
    device = flat[0].device
    return torch.linalg.vector_norm(torch.cat([f.to(device) for f in flat]), float(norm_type))

# kind: spy
# why: calls torch's own total-norm helper, cached under another name before the tests run
# fails-with: (?i)re-implements|clip_grad|total_norm
from torch.nn.utils import clip_grad_norm_ as _total


def grad_norm(parameters: torch.Tensor | Iterable[torch.Tensor], norm_type: float | str = 2.0) -> torch.Tensor:
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return torch.tensor(0.0)
    copies = []
    for t in params:
        c = torch.zeros_like(t.grad, requires_grad=True)
        c.grad = t.grad.detach()
        copies.append(c)
    return _total(copies, max_norm=float("inf"), norm_type=norm_type)

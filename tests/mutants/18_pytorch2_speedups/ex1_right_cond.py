# torch.cond: a data-dependent branch Dynamo traces as one graph (both branches captured as subgraphs).
def _halve(h: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    return h * 0.5


def _centre(h: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    return h - score


def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean()
    return torch.tanh(torch.cond(score > 0, _halve, _centre, (h, score)))

# kind: work
# why: the branch is chosen with .item() (a host read): a graph break on every call
# fails-with: graph break
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean()
    positive = score.item() > 0
    return torch.tanh(h * 0.5 if positive else h - score)

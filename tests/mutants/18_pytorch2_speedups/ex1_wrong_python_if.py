# kind: work
# why: a Python `if` on a tensor: bool(score) reads the value on the host and breaks the graph
# fails-with: graph break
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean()
    if score > 0:
        h = h * 0.5
    else:
        h = h - score
    return torch.tanh(h)

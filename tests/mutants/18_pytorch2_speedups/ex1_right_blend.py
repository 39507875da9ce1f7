# A 0/1 gate in the input's dtype blends the two branches arithmetically.
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = torch.matmul(x, w)
    score = h.mean()
    gate = (score > 0).to(h.dtype)
    return (gate * (0.5 * h) + (1 - gate) * (h - score)).tanh()

# kind: dtype
# why: computes in float32 "to be safe": float64 inputs come back as float32
# fails-with: (dtype|float64)
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x.float() @ w.float()
    score = h.mean()
    return torch.tanh(torch.where(score > 0, h * 0.5, h - score))

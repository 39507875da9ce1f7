# kind: logic
# why: `score >= 0`: a score of exactly 0 takes the halving branch, where original_step subtracts
# fails-with: score of exactly 0
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean()
    return torch.tanh(torch.where(score >= 0, h * 0.5, h - score))

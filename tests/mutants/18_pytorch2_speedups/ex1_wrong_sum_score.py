# kind: logic
# why: the sum instead of the mean: the same sign, so the same branch, but h - sum is not h - mean
# fails-with: outputs
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.sum()
    return torch.tanh(torch.where(score > 0, h * 0.5, h - score))

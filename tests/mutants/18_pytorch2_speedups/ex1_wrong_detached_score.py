# kind: logic
# why: the score is detached (it is "only a condition"), but the else branch subtracts it: wrong gradients
# fails-with: gradient
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean().detach()
    return torch.tanh(torch.where(score > 0, h * 0.5, h - score))

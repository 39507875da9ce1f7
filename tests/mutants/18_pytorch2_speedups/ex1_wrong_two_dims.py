# kind: inputs
# why: the mean written for a 2-D h (rows x columns): wrong for batched x of shape (B, N, D)
# fails-with: outputs
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.sum() / (h.shape[0] * h.shape[1])
    return torch.tanh(torch.where(score > 0, h * 0.5, h - score))

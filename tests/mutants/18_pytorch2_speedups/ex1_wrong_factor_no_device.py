# kind: device
# why: the per-branch factor is a tensor built without device=: on a GPU it is on the CPU and the product fails
# fails-with: device
def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    score = h.mean()
    half = torch.full(h.shape, 0.5, dtype=h.dtype)
    return torch.tanh(torch.where(score > 0, h * half, h - score))

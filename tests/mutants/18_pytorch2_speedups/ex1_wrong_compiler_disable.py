# kind: spy
# why: the branch is hidden in a function excluded from compilation: explain counts no break, but nothing is traced
# fails-with: (graphs|compil|trace)
@torch.compiler.disable
def _pick(h: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    return h * 0.5 if score.item() > 0 else h - score


def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    return torch.tanh(_pick(h, h.mean()))

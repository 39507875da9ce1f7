# kind: spy
# why: marks the branching helper allow_in_graph so Dynamo records it as one opaque call instead of tracing it:
#      the .item() still runs at every call
# fails-with: (graph|Dynamo|compil|trace|printed)
@torch._dynamo.allow_in_graph
def _pick(h: torch.Tensor, score: torch.Tensor) -> torch.Tensor:
    return h * 0.5 if score.item() > 0 else h - score


def no_break_step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """original_step's outputs, traced by Dynamo as one graph (no .item(), no print)."""
    h = x @ w
    return torch.tanh(_pick(h, h.mean()))

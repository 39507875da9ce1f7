# kind: inputs
# why: flattens the batch axes with .view(): fails on non-contiguous q, k, v (heads split by a transpose)
# fails-with: (contiguous|view|raised)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    *batch, L, E = q.shape
    S, Ev = k.shape[-2], v.shape[-1]
    scale = 1 / math.sqrt(E) if scale is None else scale
    qf, kf, vf = q.view(-1, L, E), k.view(-1, S, E), v.view(-1, S, Ev)
    scores = torch.bmm(qf, kf.transpose(1, 2)) * scale
    if is_causal:
        scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    if attn_mask is not None:
        m = attn_mask.expand(*batch, L, S).reshape(-1, L, S)
        scores = scores.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else scores + m
    return torch.bmm(scores.softmax(-1), vf).view(*batch, L, Ev)

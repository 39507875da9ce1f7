# kind: dtype
# why: tells an additive mask by `dtype == torch.float32`: a float64 or bfloat16 mask is treated as boolean
# fails-with: (additive|float mask|raised)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    L, S = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    if is_causal:
        scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.float32:
            scores = scores + attn_mask
        else:
            scores = scores.masked_fill(~attn_mask.bool(), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v

# kind: dtype
# why: the softmax always in float32 (for "stability"), cast back: float64 inputs lose their precision
# fails-with: float64
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    L, S = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    if is_causal:
        scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    weights = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    return weights @ v

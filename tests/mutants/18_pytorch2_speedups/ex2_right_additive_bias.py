# Every mask turned into one additive bias in the scores' dtype (0 or -inf), built on q's device; baddbmm-free.
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    L, S, E = q.size(-2), k.size(-2), q.size(-1)
    factor = E ** -0.5 if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype, device=q.device)
    if is_causal:
        causal = torch.ones(L, S, dtype=torch.bool, device=q.device).triu(diagonal=1)
        bias = bias.masked_fill(causal, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = torch.zeros_like(bias).masked_fill(attn_mask.logical_not(), float("-inf")) + bias
        else:
            bias = attn_mask + bias
    scores = torch.matmul(q, k.mT) * factor + bias
    return torch.matmul(torch.softmax(scores, dim=-1), v)

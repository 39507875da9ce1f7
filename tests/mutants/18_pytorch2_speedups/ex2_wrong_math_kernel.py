# kind: spy
# why: calls SDPA's own math implementation (aten::_scaled_dot_product_attention_math) and keeps its first output
# fails-with: (scaled_dot_product|compute it yourself)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    out, _weights = torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask, 0.0, is_causal,
                                                                     scale=scale)
    return out

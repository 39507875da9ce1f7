# kind: spy
# why: calls the ATen operator behind F.scaled_dot_product_attention through torch.ops.aten: nothing re-implemented
# fails-with: (scaled_dot_product|compute it yourself)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    return torch.ops.aten.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal,
                                                       scale=scale)

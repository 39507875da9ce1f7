# kind: spy
# why: keeps a reference to the C function behind F.scaled_dot_product_attention, taken before any test runs
# fails-with: (scaled_dot_product|SDPA operator)
_kernel = torch._C._nn.scaled_dot_product_attention


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    return _kernel(q, k, v, attn_mask=attn_mask, dropout_p=0.0, is_causal=is_causal, scale=scale)

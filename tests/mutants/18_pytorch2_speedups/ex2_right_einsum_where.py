# einsum for both products, torch.where for the boolean masks, an explicit max-subtracted softmax.
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: torch.Tensor | None = None,
              is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v, as F.scaled_dot_product_attention computes it (no dropout)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = torch.einsum("...le,...se->...ls", q, k) * scale
    neg = torch.tensor(float("-inf"), dtype=s.dtype, device=s.device)
    if is_causal:
        rows = torch.arange(q.shape[-2], device=q.device)[:, None]
        cols = torch.arange(k.shape[-2], device=q.device)[None, :]
        s = torch.where(cols <= rows, s, neg)
    if attn_mask is not None:
        s = torch.where(attn_mask, s, neg) if attn_mask.dtype == torch.bool else s + attn_mask
    s = s - s.amax(dim=-1, keepdim=True).detach()
    p = s.exp()
    p = p / p.sum(dim=-1, keepdim=True)
    return torch.einsum("...ls,...sd->...ld", p, v)

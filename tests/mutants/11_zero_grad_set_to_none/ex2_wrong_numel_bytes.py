# kind: logic
# why: counts numel() * element_size() of each gradient, not its storage: a view of a larger buffer holds the whole buffer
# fails-with: (?i)storage|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    out = []
    for group in optimizer.param_groups:
        out.append(sum(p.grad.numel() * p.grad.element_size() for p in group["params"] if p.grad is not None))
    return out

# kind: logic
# why: dedupes by id(p.grad): the same tensor on two parameters counts once, but views of one buffer count again
# fails-with: (?i)view|buffer|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    seen, out = set(), []
    for group in optimizer.param_groups:
        total = 0
        for p in group["params"]:
            if p.grad is not None and id(p.grad) not in seen:
                seen.add(id(p.grad))
                total += p.grad.untyped_storage().nbytes()
        out.append(total)
    return out

# kind: structure
# why: reads optimizer.param_groups[0] only, as if every optimizer had one group
# fails-with: (?i)group|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    total = 0
    for p in optimizer.param_groups[0]["params"]:
        if p.grad is not None:
            total += p.grad.untyped_storage().nbytes()
    return [total]

# kind: logic
# why: forgets the storages seen in earlier groups: a buffer shared across groups is counted in each of them
# fails-with: (?i)shared|once|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    out = []
    for group in optimizer.param_groups:
        seen, total = set(), 0
        for p in group["params"]:
            if p.grad is None:
                continue
            key = (p.grad.device, p.grad.untyped_storage().data_ptr())
            if key not in seen:
                seen.add(key)
                total += p.grad.untyped_storage().nbytes()
        out.append(total)
    return out

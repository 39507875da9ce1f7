# kind: logic
# why: skips parameters with requires_grad=False, but a frozen parameter can still hold an old gradient's memory
# fails-with: (?i)frozen|requires_grad|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    seen, out = set(), []
    for group in optimizer.param_groups:
        total = 0
        for p in group["params"]:
            if not p.requires_grad or p.grad is None:
                continue
            s = p.grad.untyped_storage()
            if (p.grad.device, s.data_ptr()) not in seen:
                seen.add((p.grad.device, s.data_ptr()))
                total += s.nbytes()
        out.append(total)
    return out

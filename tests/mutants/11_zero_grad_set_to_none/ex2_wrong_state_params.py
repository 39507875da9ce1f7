# kind: structure
# why: walks optimizer.state (parameters the optimizer has stepped) instead of the groups: before the first step, or for SGD without momentum, nothing is found
# fails-with: (?i)expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    stepped = set(map(id, optimizer.state.keys()))
    seen, out = set(), []
    for group in optimizer.param_groups:
        total = 0
        for p in group["params"]:
            if id(p) in stepped and p.grad is not None:
                s = p.grad.untyped_storage()
                if (p.grad.device, s.data_ptr()) not in seen:
                    seen.add((p.grad.device, s.data_ptr()))
                    total += s.nbytes()
        out.append(total)
    return out

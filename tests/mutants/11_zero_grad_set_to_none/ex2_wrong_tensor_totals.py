# kind: dtype
# why: adds the bytes up in a tensor (torch.tensor(nbytes).sum()) and returns 0-d tensors instead of plain ints
# fails-with: (?i)plain int
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    seen, out = set(), []
    for group in optimizer.param_groups:
        sizes = []
        for p in group["params"]:
            if p.grad is None:
                continue
            s = p.grad.untyped_storage()
            if (p.grad.device, s.data_ptr()) not in seen:
                seen.add((p.grad.device, s.data_ptr()))
                sizes.append(s.nbytes())
        out.append(torch.tensor(sizes, dtype=torch.int64).sum())
    return out

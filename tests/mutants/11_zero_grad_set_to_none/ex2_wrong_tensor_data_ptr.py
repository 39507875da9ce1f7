# kind: logic
# why: dedupes by the tensor's data_ptr() (where its first element is), not the storage's: views at other offsets of one buffer count again
# fails-with: (?i)view|buffer|expected
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    seen, out = set(), []
    for group in optimizer.param_groups:
        total = 0
        for p in group["params"]:
            g = p.grad
            if g is not None and (g.device, g.data_ptr()) not in seen:
                seen.add((g.device, g.data_ptr()))
                total += g.untyped_storage().nbytes()
        out.append(total)
    return out

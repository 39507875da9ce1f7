# First pass: for each storage, the first group that holds one of its gradients and its size; second pass: sum per group.
def grad_bytes_by_group(optimizer: torch.optim.Optimizer) -> list[int]:
    groups = optimizer.param_groups
    first: dict = {}
    for i, group in enumerate(groups):
        for p in group["params"]:
            if p.grad is not None:
                st = p.grad.untyped_storage()
                first.setdefault((str(p.grad.device), st.data_ptr()), (i, int(st.nbytes())))
    sizes = [0] * len(groups)
    for i, nbytes in first.values():
        sizes[i] += nbytes
    return sizes

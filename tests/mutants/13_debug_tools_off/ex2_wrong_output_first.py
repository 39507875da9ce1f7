# kind: work
# why: runs the model once without hooks and again with hooks only when the final output is non-finite: two forward passes, and a NaN masked later in the model is missed
# fails-with: final output|exactly once
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(isinstance(x, torch.Tensor) and not torch.isfinite(x).all() for x in inputs):
        return "<input>"

    def bad(out) -> bool:
        if isinstance(out, torch.Tensor):
            return not bool(torch.isfinite(out).all())
        if isinstance(out, (tuple, list)):
            return any(bad(o) for o in out)
        return False

    with torch.no_grad():
        if not bad(model(*inputs)):  # a quick check first: nothing to look for if the output is finite
            return None
    found, handles = [], []
    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(
                lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None))
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return found[0] if found else None

# kind: logic
# why: checks for NaN only, so a module that returns +inf is missed
# fails-with: inf
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(isinstance(x, torch.Tensor) and torch.isnan(x).any() for x in inputs):
        return "<input>"

    def bad(out) -> bool:
        if isinstance(out, torch.Tensor):
            return bool(torch.isnan(out).any())
        if isinstance(out, (tuple, list)):
            return any(bad(o) for o in out)
        return False

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

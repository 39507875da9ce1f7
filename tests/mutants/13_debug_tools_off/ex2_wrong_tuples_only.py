# kind: structure
# why: looks inside tuple outputs but not list outputs
# fails-with: list
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(isinstance(x, torch.Tensor) and not torch.isfinite(x).all() for x in inputs):
        return "<input>"

    def bad(out) -> bool:
        if isinstance(out, torch.Tensor):
            return not bool(torch.isfinite(out).all())
        if isinstance(out, tuple):
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

# kind: state
# why: removes its hooks after forward but not in a finally, so a model that raises keeps them
# fails-with: finally|hooks
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(isinstance(x, torch.Tensor) and not torch.isfinite(x).all() for x in inputs):
        return "<input>"

    def bad(out) -> bool:
        if isinstance(out, torch.Tensor):
            return not bool(torch.isfinite(out).all())
        if isinstance(out, (tuple, list)):
            return any(bad(o) for o in out)
        return False

    found, handles = [], []
    for name, module in model.named_modules():
        handles.append(module.register_forward_hook(
            lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None))
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return found[0] if found else None

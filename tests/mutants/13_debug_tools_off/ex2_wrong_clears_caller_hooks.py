# kind: structure
# why: removes hooks by clearing every module's hook dict, which also deletes the hooks the caller had installed
# fails-with: hooks
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(isinstance(x, torch.Tensor) and not torch.isfinite(x).all() for x in inputs):
        return "<input>"

    def bad(out) -> bool:
        if isinstance(out, torch.Tensor):
            return not bool(torch.isfinite(out).all())
        if isinstance(out, (tuple, list)):
            return any(bad(o) for o in out)
        return False

    found = []
    for name, module in model.named_modules():
        module.register_forward_hook(lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None)
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for module in model.modules():
            module._forward_hooks.clear()
    return found[0] if found else None

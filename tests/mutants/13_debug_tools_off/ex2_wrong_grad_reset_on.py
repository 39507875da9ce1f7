# kind: state
# why: switches grad mode off with a bare call and back on afterwards, so a caller inside torch.no_grad() gets it on
# fails-with: grad mode
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
    torch.set_grad_enabled(False)
    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(
                lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None))
        model(*inputs)
    finally:
        for h in handles:
            h.remove()
        torch.set_grad_enabled(True)
    return found[0] if found else None

# kind: work
# why: when no hook fired it runs the model a second time to look at its output, so every finite model runs twice
# fails-with: exactly once
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
    try:
        for name, module in model.named_modules():
            if not name:
                continue  # the model itself: its output is looked at below
            handles.append(module.register_forward_hook(
                lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None))
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    if found:
        return found[0]
    with torch.no_grad():  # no child fired: the model's own forward may have made it
        return "" if bad(model(*inputs)) else None

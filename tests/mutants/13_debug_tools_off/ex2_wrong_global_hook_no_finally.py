# kind: state
# why: a global forward hook (register_module_forward_hook) and grad mode switched off, both put back only when the model returns
# fails-with: global forward hooks
def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(torch.is_tensor(x) and not torch.isfinite(x).all() for x in inputs):
        return "<input>"
    names = {id(m): n for n, m in model.named_modules()}
    found = []

    def bad(o) -> bool:
        if torch.is_tensor(o):
            return not bool(torch.isfinite(o).all())
        if isinstance(o, (list, tuple)):
            return any(bad(x) for x in o)
        return False

    def hook(m, args, out):
        if not found and id(m) in names and bad(out):
            found.append(names[id(m)])

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    torch.set_grad_enabled(False)
    model(*inputs)
    handle.remove()
    torch.set_grad_enabled(True)
    return found[0] if found else None

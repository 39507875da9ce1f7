def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    # one global forward hook (every module of every model) with a name table for this model's modules
    for x in inputs:
        if torch.is_tensor(x) and not torch.isfinite(x).all():
            return "<input>"
    names = {}
    for name, module in model.named_modules():
        names.setdefault(id(module), name)

    def finite(out) -> bool:
        if torch.is_tensor(out):
            return bool(torch.isfinite(out).all())
        if isinstance(out, (list, tuple)):
            return all(finite(o) for o in out)
        return True

    culprit = []

    def hook(module, args, out):
        if not culprit and id(module) in names and not finite(out):
            culprit.append(names[id(module)])

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        with torch.inference_mode():
            model(*inputs)
    finally:
        handle.remove()
    return culprit[0] if culprit else None

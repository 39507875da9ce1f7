def first_nonfinite(model: nn.Module, *inputs) -> str | None:
    if any(torch.is_tensor(x) and not bool(torch.isfinite(x).all()) for x in inputs):
        return "<input>"

    def tensors(out):
        stack, flat = [out], []
        while stack:
            o = stack.pop()
            if torch.is_tensor(o):
                flat.append(o)
            elif isinstance(o, (list, tuple)):
                stack.extend(o)
        return flat

    state = {"first": None}
    handles = []

    def make(name):
        def hook(module, args, out):
            if state["first"] is None and any(not bool(torch.isfinite(t).all()) for t in tensors(out)):
                state["first"] = name
        return hook

    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(make(name)))
        model(*inputs)  # grad mode as the caller has it
    finally:
        while handles:
            handles.pop().remove()
    return state["first"]

# kind: state
# why: puts the model in eval mode for the check and calls model.train() afterwards, whatever mode it was in
# fails-with: train/eval|training
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
    model.eval()  # no dropout noise while looking for the culprit
    try:
        for name, module in model.named_modules():
            handles.append(module.register_forward_hook(
                lambda m, args, out, name=name: found.append(name) if not found and bad(out) else None))
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
        model.train()
    return found[0] if found else None

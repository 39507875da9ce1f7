# kind: logic
# why: checks torch.is_grad_enabled() during each forward instead of what was recorded, so a frozen model fails
# fails-with: frozen
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    found, ran = [], []

    def hook(module, args, output):
        ran.append(1)
        if torch.is_grad_enabled():
            found.append(type(module).__name__)

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        for h in handles:
            h.remove()
    if not ran:
        raise AssertionError("the model never ran")
    if found or saved.bytes:
        raise AssertionError(f"autograd was on in {found}, {saved.bytes} bytes saved")

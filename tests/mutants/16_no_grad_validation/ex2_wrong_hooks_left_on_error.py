# kind: state
# why: removes its hooks after a normal return only; when eval_fn raises they stay on the model
# fails-with: hooks
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    found, ran = [], []

    def hook(module, args, output):
        ran.append(1)
        outs = output if isinstance(output, (tuple, list)) else [output]
        if any(isinstance(t, torch.Tensor) and t.requires_grad for t in outs):
            found.append(type(module).__name__)

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    for h in handles:
        h.remove()
    if not ran:
        raise AssertionError("the model never ran")
    if found or saved.bytes:
        raise AssertionError(f"autograd recorded: outputs requiring grad in {found}, {saved.bytes} bytes saved")

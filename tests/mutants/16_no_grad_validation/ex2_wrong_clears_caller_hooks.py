# kind: state
# why: cleans up by clearing every module's forward hooks, which also removes the hooks the caller had installed
# fails-with: hooks
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    found, ran = [], []

    def hook(module, args, output):
        ran.append(module)
        outs = output if isinstance(output, (tuple, list)) else [output]
        if any(isinstance(t, torch.Tensor) and t.requires_grad for t in outs):
            found.append(type(module).__name__)

    for m in model.modules():
        m.register_forward_hook(hook)
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        for m in model.modules():
            m._forward_hooks.clear()
    if not ran:
        raise AssertionError("the model never ran")
    if found or saved.bytes:
        raise AssertionError(f"autograd recorded a graph: outputs requiring grad in {found}, "
                             f"{saved.bytes} bytes saved for backward")

# kind: structure
# why: hooks the model and its direct children only, so layers nested deeper (blocks inside containers) go unwatched
# fails-with: records a graph, but check_no_autograd did not raise
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    found, ran = [], []

    def hook(module, args, output):
        ran.append(1)
        outs = output if isinstance(output, (tuple, list)) else [output]
        if any(isinstance(t, torch.Tensor) and t.requires_grad for t in outs):
            found.append(type(module).__name__)

    handles = [m.register_forward_hook(hook) for m in [model, *model.children()]]
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        for h in handles:
            h.remove()
    if not ran:
        raise AssertionError("the model never ran")
    if found or saved.bytes:
        raise AssertionError(f"autograd recorded: outputs requiring grad in {found}, {saved.bytes} bytes saved")

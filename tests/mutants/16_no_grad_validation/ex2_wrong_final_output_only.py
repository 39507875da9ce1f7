# kind: structure
# why: hooks only the model itself, so a graph that ends inside the model (a detached final output) goes unseen
# fails-with: records a graph, but check_no_autograd did not raise
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    found, ran = [], []

    def hook(module, args, output):
        ran.append(1)
        outs = output if isinstance(output, (tuple, list)) else [output]
        found.extend(t for t in outs if isinstance(t, torch.Tensor) and t.requires_grad)

    handle = model.register_forward_hook(hook)
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        handle.remove()
    if not ran:
        raise AssertionError("the model never ran")
    if found or saved.bytes:
        raise AssertionError(f"autograd recorded: {len(found)} outputs require grad, {saved.bytes} bytes saved")

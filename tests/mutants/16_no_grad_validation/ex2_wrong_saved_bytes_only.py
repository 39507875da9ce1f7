# kind: logic
# why: counts only the bytes saved for backward, so a graph that saves nothing (x + bias) passes
# fails-with: records a graph, but check_no_autograd did not raise
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    ran = []
    handles = [m.register_forward_hook(lambda *_: ran.append(1)) for m in model.modules()]
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        for h in handles:
            h.remove()
    if not ran:
        raise AssertionError("the model never ran")
    if saved.bytes:
        raise AssertionError(f"autograd saved {saved.bytes} bytes for backward")

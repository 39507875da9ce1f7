# kind: work
# why: the hooks keep every module output to inspect after the call, so every batch's graph stays alive during the evaluation
# fails-with: alive|kept
def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    outputs = []
    handles = [m.register_forward_hook(lambda module, args, output: outputs.append((module, output)))
               for m in model.modules()]
    try:
        saved = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        for h in handles:
            h.remove()
    if not outputs:
        raise AssertionError("the model never ran")

    def tensors(out):
        if isinstance(out, torch.Tensor):
            return [out]
        if isinstance(out, (tuple, list)):
            return [t for o in out for t in tensors(o)]
        return []

    found = [type(m).__name__ for m, out in outputs if any(t.requires_grad for t in tensors(out))]
    if found or saved.bytes:
        raise AssertionError(f"autograd recorded a graph: outputs requiring grad in {found[:3]}, "
                             f"{saved.bytes} bytes saved for backward")

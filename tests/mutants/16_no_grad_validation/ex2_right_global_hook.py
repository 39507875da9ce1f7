# One global forward hook (torch.nn.modules.module.register_module_forward_hook) filtered to the model's modules,
# outputs flattened with torch.utils._pytree.
import torch.utils._pytree as _pytree


def check_no_autograd(eval_fn, model: nn.Module, loader) -> None:
    mine = {id(m): name or "the model" for name, m in model.named_modules()}
    calls, culprits = 0, []

    def watch(module, args, output):
        nonlocal calls
        if id(module) not in mine:
            return
        calls += 1
        if any(isinstance(t, torch.Tensor) and t.requires_grad for t in _pytree.tree_leaves(output)):
            culprits.append(mine[id(module)])

    handle = torch.nn.modules.module.register_module_forward_hook(watch)
    try:
        record = cu.saved_tensors(lambda: eval_fn(model, loader))
    finally:
        handle.remove()
    assert calls, "the model's forward never ran: nothing was checked"
    assert not culprits and record.bytes == 0, (
        f"autograd recorded during the evaluation: outputs requiring grad from {sorted(set(culprits))}, "
        f"{record.bytes} bytes saved for backward")

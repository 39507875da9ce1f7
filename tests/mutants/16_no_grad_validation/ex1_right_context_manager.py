# The modes handled by a contextlib.contextmanager, the loop in an ExitStack with inference_mode; predictions of
# each batch compared at once, totals as 0-d tensors summed with torch.add.
import contextlib


@contextlib.contextmanager
def _evaluating(model):
    flags = [(m, m.training) for m in model.modules()]
    try:
        for m, _ in flags:
            m.training = False
        yield
    finally:
        for m, flag in flags:
            m.training = flag


def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(model.parameters()).device
    hits = total = None
    seen = 0
    with contextlib.ExitStack() as stack:
        stack.enter_context(_evaluating(model))
        stack.enter_context(torch.inference_mode())
        for batch in loader:
            X, y = (t.to(device) for t in batch)
            logits = model(X)
            batch_hits = logits.argmax(dim=1).eq(y).sum()
            batch_loss = loss_fn(logits, y).mul(y.numel())
            hits = batch_hits if hits is None else torch.add(hits, batch_hits)
            total = batch_loss if total is None else torch.add(total, batch_loss)
            seen += y.numel()
    if seen == 0:
        raise ValueError("the loader yielded no examples")
    return hits.item() / seen, total.item() / seen

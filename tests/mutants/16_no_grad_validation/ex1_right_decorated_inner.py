# The loop in an inner function decorated with @torch.inference_mode(); totals in one float64 tensor on the device;
# modes kept in a dict keyed by module and restored in finally.
def evaluate(model: nn.Module, loader, loss_fn=F.cross_entropy) -> tuple[float, float]:
    device = next(iter(model.parameters())).device
    saved = {m: m.training for m in model.modules()}

    @torch.inference_mode()
    def run():
        totals = torch.zeros(2, dtype=torch.float64, device=device)  # correct, loss sum
        n = 0
        for X, y in loader:
            X = X.to(device)
            y = y.to(device)
            logits = model(X)
            totals += torch.stack([(logits.argmax(dim=1) == y).sum().double(),
                                   loss_fn(logits, y).double() * y.shape[0]])
            n += y.shape[0]
        return totals, n

    try:
        model.eval()
        totals, n = run()
    finally:
        for m, flag in saved.items():
            m.train(flag) if not list(m.children()) else setattr(m, "training", flag)
    if not n:
        raise ValueError("no examples")
    correct, loss = totals.tolist()
    return correct / n, loss / n

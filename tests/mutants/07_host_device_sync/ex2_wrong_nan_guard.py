# kind: work
# why: skips the step when the loss is not finite, with a Python `if` on a device value: a sync every step
# fails-with: host syncs|waited for the device
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        if not torch.isfinite(loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.detach(), "cross_entropy": F.cross_entropy(out.detach(), y)})
    return history

# kind: work
# why: stops on a NaN loss with `if torch.isnan(loss):`, a Python if on a device value: a sync every step
# fails-with: host syncs|waited for the device
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, correct, seen = [], 0, 0
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        if torch.isnan(loss):
            raise FloatingPointError("the loss is NaN")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        correct = correct + (out.argmax(1) == y).sum()
        seen += len(y)
    if not losses:
        raise ValueError("no batches")
    values = torch.stack(losses).tolist()
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

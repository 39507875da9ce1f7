# kind: work
# why: keeps detached losses during the loop but reads them one .item() at a time afterwards: a sync per step
# fails-with: host syncs|waited for the device
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, correct, seen = [], 0, 0
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        correct = correct + (out.argmax(1) == y).sum()
        seen += len(y)
    if not losses:
        raise ValueError("no batches")
    values = [loss.item() for loss in losses]
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

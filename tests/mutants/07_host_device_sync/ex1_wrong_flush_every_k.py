# kind: work
# why: flushes the losses to the host every 4 steps: fewer syncs, but still more with every step
# fails-with: host syncs
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    values, pending, correct, seen = [], [], 0, 0
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pending.append(loss.detach())
        if len(pending) == 4:
            values += torch.stack(pending).tolist()
            pending = []
        correct = correct + (out.argmax(1) == y).sum()
        seen += len(y)
    if pending:
        values += torch.stack(pending).tolist()
    if not values:
        raise ValueError("no batches")
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

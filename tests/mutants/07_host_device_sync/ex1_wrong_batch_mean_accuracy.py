# kind: logic
# why: averages per-batch accuracies, which weighs a smaller last batch like a full one
# fails-with: accuracy
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, accs = [], []
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        accs.append((out.argmax(1) == y).float().mean())
    if not losses:
        raise ValueError("no batches")
    values = torch.stack(losses).tolist()
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": float(torch.stack(accs).mean())}

# kind: device
# why: the correct-prediction counter is made on the notebook's env.device, not the batches' device
# fails-with: device
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, seen = [], 0
    correct = torch.zeros((), dtype=torch.long, device=env.device)
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        correct += (out.argmax(1) == y).sum()
        seen += len(y)
    if not losses:
        raise ValueError("no batches")
    values = torch.stack(losses).tolist()
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

# kind: device
# why: the running totals are made on the machine's device, not the batches', and updated in place
# fails-with: device
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    total, correct, seen, losses = torch.zeros((), device=device), torch.zeros((), device=device, dtype=torch.long), 0, []
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

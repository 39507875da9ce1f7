# kind: work
# why: computes the predictions with a second forward pass under no_grad instead of reusing the step's output
# fails-with: forward|ran the model
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, correct, seen = [], 0, 0
    for X, y in batches:
        with torch.no_grad():
            correct = correct + (model(X).argmax(1) == y).sum()
        loss = loss_fn(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        seen += len(y)
    if not losses:
        raise ValueError("no batches")
    values = torch.stack(losses).tolist()
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

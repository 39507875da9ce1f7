# kind: work
# why: keeps every step's output (and with it the step's graph) to compute the accuracy after the loop in one go
# fails-with: alive|graph
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, outs, targets = [], [], []
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        outs.append(out)
        targets.append(y)
    if not losses:
        raise ValueError("no batches")
    values = torch.stack(losses).tolist()
    correct = int((torch.cat(outs).argmax(1) == torch.cat(targets)).sum())
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": correct / len(torch.cat(targets))}

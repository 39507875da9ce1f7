# kind: state
# why: calls model.train() as training loops often do: a model handed over in eval mode trains with dropout on and is left in training mode
# fails-with: train|dropout|eval|parameter|loss of step
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    model.train()
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
    values = torch.stack(losses).tolist()
    return {"losses": values, "mean_loss": sum(values) / len(values), "accuracy": int(correct) / seen}

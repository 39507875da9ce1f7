# kind: dtype
# why: sums the losses into a float32 accumulator, so a float64 model's mean loss is rounded to float32
# fails-with: mean_loss
def sync_free_loop(model, optimizer, batches, loss_fn=F.cross_entropy):
    losses, correct, seen = [], 0, 0
    total = torch.zeros(())
    for X, y in batches:
        out = model(X)
        loss = loss_fn(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
        total += loss.detach()
        correct = correct + (out.argmax(1) == y).sum()
        seen += len(y)
    if not losses:
        raise ValueError("no batches")
    values, mean = torch.stack(losses).tolist(), (total / len(losses)).item()
    return {"losses": values, "mean_loss": mean, "accuracy": int(correct) / seen}

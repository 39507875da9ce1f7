# kind: work
# why: keeps the losses with their graphs for the whole loop and detaches them only when returning: memory still grows with the steps while it runs
# fails-with: alive|graph
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss, "cross_entropy": F.cross_entropy(out, y)})
    return [{k: v.detach() for k, v in step.items()} for step in history]

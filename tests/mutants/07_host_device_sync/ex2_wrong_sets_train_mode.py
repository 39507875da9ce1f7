# kind: state
# why: calls model.train() first: a model handed over in eval mode trains with dropout on and is left in training mode
# fails-with: train|eval|dropout|parameter|step 0
def fixed_training(model, optimizer, batches, smoothing=0.1):
    model.train()
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.detach(), "cross_entropy": F.cross_entropy(out.detach(), y)})
    return history

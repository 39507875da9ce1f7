# kind: work
# why: logs the plain cross-entropy from a second forward pass under no_grad instead of the step's own output
# fails-with: forward|ran the model
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        with torch.no_grad():
            plain = F.cross_entropy(model(X), y)
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.detach(), "cross_entropy": plain})
    return history

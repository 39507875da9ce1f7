# kind: logic
# why: detaches the training loss but logs the plain cross-entropy with its graph (and its saved activations)
# fails-with: requires grad
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.detach(), "cross_entropy": F.cross_entropy(out, y)})
    return history

# kind: logic
# why: .clone() copies the value but keeps the graph; it is not .detach()
# fails-with: requires grad
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.clone(), "cross_entropy": F.cross_entropy(out, y).clone()})
    return history

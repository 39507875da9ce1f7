# kind: device
# why: moves each logged value to the CPU: a copy and a host sync every step, and off the model's device
# fails-with: device|host syncs|waited
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            history.append({"loss": loss.detach().cpu(), "cross_entropy": F.cross_entropy(out, y).cpu()})
    return history

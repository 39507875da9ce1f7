# kind: dtype
# why: logs the values as float32 (.float()), so a float64 model's logged values lose precision
# fails-with: dtype|float64
def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append({"loss": loss.detach().float(), "cross_entropy": F.cross_entropy(out.detach(), y).float()})
    return history

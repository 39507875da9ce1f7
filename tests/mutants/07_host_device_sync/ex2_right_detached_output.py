def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logits = out.detach()  # the logged loss needs the values, not the graph
        history.append(dict(loss=loss.detach(), cross_entropy=F.cross_entropy(logits, y)))
    return history

def fixed_training(model, optimizer, batches, smoothing=0.1):
    history = []
    for X, y in batches:
        optimizer.zero_grad(set_to_none=True)
        out = model(X)
        loss = F.cross_entropy(out, y, label_smoothing=smoothing)
        loss.backward()
        optimizer.step()
        with torch.inference_mode():
            entry = {"loss": loss.detach().clone(), "cross_entropy": F.cross_entropy(out.detach(), y)}
        history.append(entry)
    return history

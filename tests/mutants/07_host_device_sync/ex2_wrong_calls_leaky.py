# kind: spy
# why: runs leaky_training and detaches its history afterwards: the leak is there for the whole run
# fails-with: leaky_training
def fixed_training(model, optimizer, batches, smoothing=0.1):
    return [{k: v.detach() for k, v in step.items()} for step in leaky_training(model, optimizer, batches, smoothing)]

# kind: inputs
# why: assumes the smaller batch comes first; with the larger first the memory looks as if it shrinks
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    growth = bytes_at_b2 - bytes_at_b1
    if growth <= 0 or b2 < b1:
        raise ValueError("memory must grow with the batch size")
    return max(b1 + (budget - bytes_at_b1) * (b2 - b1) // growth, 0)

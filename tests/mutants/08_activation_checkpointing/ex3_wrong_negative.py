# kind: logic
# why: no floor at 0: a budget below the fixed memory gives a negative batch
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    if b2 < b1:
        b1, b2, bytes_at_b1, bytes_at_b2 = b2, b1, bytes_at_b2, bytes_at_b1
    growth = bytes_at_b2 - bytes_at_b1
    if growth <= 0:
        raise ValueError("memory must grow with the batch size")
    return b1 + (budget - bytes_at_b1) * (b2 - b1) // growth

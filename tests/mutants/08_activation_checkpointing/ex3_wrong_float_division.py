# kind: dtype
# why: solves the line in floating point (math.floor of a float): exact for small numbers, off by one for large ones
# fails-with: exact|integers|expected
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    per_example = (bytes_at_b2 - bytes_at_b1) / (b2 - b1)
    if per_example <= 0:
        raise ValueError("memory must grow with the batch size")
    return max(math.floor(b1 + (budget - bytes_at_b1) / per_example), 0)

# kind: validation
# why: no check for two equal batch sizes: a ZeroDivisionError instead of the ValueError the spec asks for
# fails-with: ValueError
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1:
        raise ValueError("batch sizes must be >= 1")
    per_example = (bytes_at_b2 - bytes_at_b1) / (b2 - b1)
    if per_example <= 0:
        raise ValueError("memory must grow with the batch size")
    if b2 < b1:
        b1, b2, bytes_at_b1, bytes_at_b2 = b2, b1, bytes_at_b2, bytes_at_b1
    return max(b1 + (budget - bytes_at_b1) * (b2 - b1) // (bytes_at_b2 - bytes_at_b1), 0)

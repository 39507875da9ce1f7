# kind: dtype
# why: rounds the bytes per example down to an integer first, so half a byte per example becomes none
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    if b2 < b1:
        b1, b2, bytes_at_b1, bytes_at_b2 = b2, b1, bytes_at_b2, bytes_at_b1
    per_example = (bytes_at_b2 - bytes_at_b1) // (b2 - b1)
    if per_example <= 0:
        raise ValueError("memory must grow with the batch size")
    fixed = bytes_at_b1 - per_example * b1
    return max((budget - fixed) // per_example, 0)

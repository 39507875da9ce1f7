# kind: validation
# why: takes the absolute difference of the memories, so memory that shrinks with the batch is accepted
# fails-with: ValueError
def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    lo, hi = sorted([(b1, bytes_at_b1), (b2, bytes_at_b2)])
    growth = abs(hi[1] - lo[1])
    if growth == 0:
        raise ValueError("memory must grow with the batch size")
    return max(lo[0] + (budget - lo[1]) * (hi[0] - lo[0]) // growth, 0)

def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if b1 < 1 or b2 < 1 or b1 == b2:
        raise ValueError("need two different batch sizes >= 1")
    if (bytes_at_b2 - bytes_at_b1) * (b2 - b1) <= 0:
        raise ValueError("memory must grow with the batch size")
    if b1 > b2:
        b1, b2, bytes_at_b1, bytes_at_b2 = b2, b1, bytes_at_b2, bytes_at_b1

    def fits(b):  # bytes_at_b1 + (b - b1) * growth / (b2 - b1) <= budget, multiplied out: integers only
        return bytes_at_b1 * (b2 - b1) + (b - b1) * (bytes_at_b2 - bytes_at_b1) <= budget * (b2 - b1)

    if not fits(1):
        return 0
    hi = 2
    while fits(hi):
        hi *= 2
    lo = hi // 2  # fits(lo), not fits(hi): bisect
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo

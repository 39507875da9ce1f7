from fractions import Fraction


def activation_budget_batch(bytes_at_b1, bytes_at_b2, b1, b2, budget):
    if min(b1, b2) < 1 or b1 == b2:
        raise ValueError("two different batch sizes >= 1 are needed")
    per_example = Fraction(bytes_at_b2 - bytes_at_b1, b2 - b1)  # exact, any order
    if per_example <= 0:
        raise ValueError("memory must grow with the batch size")
    fixed = bytes_at_b1 - per_example * b1
    return max(math.floor((budget - fixed) / per_example), 0)

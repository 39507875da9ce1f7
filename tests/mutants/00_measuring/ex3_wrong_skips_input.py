# kind: logic
# why: leaves out the batch itself, thinking autograd saves nothing for an input that does not require grad
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    return batch * bytes_per_element * sum(widths[1:-1])

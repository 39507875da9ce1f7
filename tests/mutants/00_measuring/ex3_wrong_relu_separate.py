# kind: logic
# why: counts each ReLU's output and the next Linear's input as two tensors, though they are one storage
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    hidden = widths[1:-1]
    return batch * bytes_per_element * (sum(widths[:-1]) + sum(hidden))

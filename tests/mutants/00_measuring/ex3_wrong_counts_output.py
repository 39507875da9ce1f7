# kind: logic
# why: counts the last Linear's output (the logits) as saved too
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    return batch * bytes_per_element * sum(widths)

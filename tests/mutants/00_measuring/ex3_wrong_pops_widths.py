# kind: state
# why: drops the number of classes with widths.pop(), changing the caller's list
# fails-with: changed the caller
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    widths.pop()
    return batch * bytes_per_element * sum(widths)

# kind: dtype
# why: assumes float32 (4 bytes per element) whatever bytes_per_element says
# fails-with: bytes_per_element
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    return batch * 4 * sum(widths[:-1])

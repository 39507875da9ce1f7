# kind: validation
# why: checks the widths but not the batch, so batch 0 or -3 gives 0 or a negative byte count
# fails-with: ValueError
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    return batch * bytes_per_element * sum(widths[:-1])

# A correct alternative: walk the layers, counting each Linear's input once (the ReLU shares its storage).
def expected_saved_bytes(batch, widths, bytes_per_element=4):
    widths = list(widths)
    if batch < 1 or len(widths) < 2:
        raise ValueError(f"need batch >= 1 and at least two widths, got batch={batch}, widths={widths}")
    elements = 0
    for fan_in, _fan_out in zip(widths, widths[1:]):
        elements += batch * fan_in  # the Linear's input: the batch, or the previous ReLU's output
    return elements * bytes_per_element

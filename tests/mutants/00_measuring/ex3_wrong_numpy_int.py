# kind: dtype
# why: sums with NumPy and returns a numpy.int64, not the Python int the spec asks for
# fails-with: int
import numpy as np


def expected_saved_bytes(batch, widths, bytes_per_element=4):
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if len(widths) < 2:
        raise ValueError("need at least two widths")
    return np.sum(widths[:-1]) * batch * bytes_per_element

# kind: validation
# why: treats every RuntimeError (an illegal memory access, a device mismatch) as out of memory
# fails-with: not out of memory
import gc

import torch


def largest_batch(try_step, *, start=1, limit=2**20):
    if start < 1 or limit < start:
        raise ValueError("need 1 <= start <= limit")

    def fits(b):
        try:
            try_step(b)
            return True
        except RuntimeError:  # OutOfMemoryError is a RuntimeError, and so are cuDNN's
            pass
        gc.collect()
        torch.cuda.empty_cache()
        return False

    good, size = 0, start
    while fits(size):
        good = size
        if size == limit:
            return good
        size = min(2 * size, limit)
    if good == 0:
        return 0
    bad = size
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good

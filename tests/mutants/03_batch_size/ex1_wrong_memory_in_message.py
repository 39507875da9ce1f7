# kind: validation
# why: takes any RuntimeError that mentions memory for out of memory (an illegal memory access included)
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
        except RuntimeError as e:
            text = str(e)
            if not (isinstance(e, torch.OutOfMemoryError) or "memory" in text.lower() or "CUDNN" in text
                    or "unable to find an engine" in text):
                raise
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

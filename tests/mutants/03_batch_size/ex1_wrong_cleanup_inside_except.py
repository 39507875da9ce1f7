# kind: state
# why: frees the caches inside the except block, while the exception still holds the failed step's tensors
# fails-with: still referenced
import gc

import torch

_CUDNN = ("GET was unable to find an engine", "FIND was unable to find an engine", "CUDNN_STATUS_ALLOC_FAILED")


def largest_batch(try_step, *, start=1, limit=2**20):
    if start < 1 or limit < start:
        raise ValueError("need 1 <= start <= limit")

    def fits(b):
        try:
            try_step(b)
            return True
        except torch.OutOfMemoryError:
            gc.collect()
            torch.cuda.empty_cache()
            return False
        except RuntimeError as e:
            if not any(m in str(e) for m in _CUDNN):
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

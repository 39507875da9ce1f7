# kind: inputs
# why: doubles in powers of two only and never tries a limit that is not one (right only for power-of-two limits)
# fails-with: double up to limit|expected \d+, got \d+
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
        except RuntimeError as e:
            if not (isinstance(e, torch.OutOfMemoryError) or any(m in str(e) for m in _CUDNN)):
                raise
        gc.collect()
        torch.cuda.empty_cache()
        return False

    good, size = 0, start
    while size <= limit and fits(size):
        good = size
        size *= 2
    if good == 0:
        return 0
    bad = min(size, limit + 1)
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good

# kind: structure
# why: caps the bisection at 10 rounds, enough for the lesson's sizes but not for a gap of 2**19
# fails-with: expected \d+, got \d+
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
    while fits(size):
        good = size
        if size == limit:
            return good
        size = min(2 * size, limit)
    if good == 0:
        return 0
    bad = size
    for _ in range(10):
        if bad - good <= 1:
            break
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good

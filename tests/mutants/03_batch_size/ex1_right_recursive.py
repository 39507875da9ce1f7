# A recursive bisection; the out-of-memory test is a separate predicate and the cleanup runs after the try statement.
import gc

import torch


def _is_oom(e):
    if isinstance(e, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(e, RuntimeError) and any(
        m in str(e) for m in ("GET was unable to find an engine", "FIND was unable to find an engine",
                                "CUDNN_STATUS_ALLOC_FAILED"))


def largest_batch(try_step, *, start=1, limit=2**20):
    if not 1 <= start <= limit:
        raise ValueError(f"need 1 <= start <= limit, got {start}, {limit}")

    def runs(b):
        failed = False
        try:
            try_step(b)
        except Exception as e:
            if not _is_oom(e):
                raise
            failed = True
        if failed:
            gc.collect()
            torch.cuda.empty_cache()
        return not failed

    def bisect(ok, bad):
        if bad - ok <= 1:
            return ok
        mid = (ok + bad) // 2
        return bisect(mid, bad) if runs(mid) else bisect(ok, mid)

    sizes = [start]
    while sizes[-1] < limit:
        sizes.append(min(sizes[-1] * 2, limit))
    last_ok = 0
    for b in sizes:
        if not runs(b):
            return bisect(last_ok, b) if last_ok else 0
        last_ok = b
    return last_ok

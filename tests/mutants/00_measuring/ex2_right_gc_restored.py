# A correct alternative: validates first, pauses the garbage collector during the timed calls (as timeit
# does) and puts it back as it found it, in a finally block.
import gc
import itertools


def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a whole number >= 1, not {calls!r}")
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0, not {warmup!r}")
    for _ in itertools.repeat(None, warmup):
        fn()
    was_on = gc.isenabled()
    gc.disable()
    try:
        sync()
        t0 = clock()
        for _ in itertools.repeat(None, calls):
            fn()
        sync()
        t1 = clock()
    finally:
        if was_on:
            gc.enable()
    return float(t1 - t0) / calls

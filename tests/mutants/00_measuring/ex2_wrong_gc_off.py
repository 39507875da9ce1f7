# kind: state
# why: turns the garbage collector off for the timed calls (as timeit does) but turns it back on without a finally, and on even when the caller had it off
# fails-with: garbage collector
import gc


def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    gc.disable()
    sync()
    start = clock()
    for _ in range(calls):
        fn()
    sync()
    elapsed = clock() - start
    gc.enable()
    return elapsed / calls

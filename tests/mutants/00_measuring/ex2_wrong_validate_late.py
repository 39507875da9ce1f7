# kind: validation
# why: checks `calls` only after the warm-up, so a bad argument still runs fn (seconds of GPU work) before the error
# fails-with: before calling fn|called fn
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if warmup < 0:
        raise ValueError("warmup must be >= 0")
    for _ in range(warmup):
        fn()
    if calls < 1:
        raise ValueError("calls must be >= 1")
    sync()
    start = clock()
    for _ in range(calls):
        fn()
    sync()
    return (clock() - start) / calls

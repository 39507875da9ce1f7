# kind: logic
# why: returns the total time of the timed calls, not the time per call
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    sync()
    start = clock()
    for _ in range(calls):
        fn()
    sync()
    return clock() - start

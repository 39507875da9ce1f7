# kind: logic
# why: stops the clock without waiting for the queued calls: it times the launches only
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    sync()
    start = clock()
    for _ in range(calls):
        fn()
    end = clock()
    sync()
    return (end - start) / calls

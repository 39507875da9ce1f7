# kind: logic
# why: reads the start time before synchronising, so the warm-up's queued work lands in the measurement
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    for _ in range(warmup):
        fn()
    start = clock()
    sync()
    for _ in range(calls):
        fn()
    sync()
    return (clock() - start) / calls

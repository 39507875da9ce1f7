# kind: logic
# why: skips the warm-up calls, so the cold first call is timed with the others
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    sync()
    start = clock()
    for _ in range(calls):
        fn()
    sync()
    return (clock() - start) / calls

# kind: work
# why: synchronises after every timed call, which times each call's latency and stops launches overlapping work
# fails-with: sync\(\) ran
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
    return (clock() - start) / calls

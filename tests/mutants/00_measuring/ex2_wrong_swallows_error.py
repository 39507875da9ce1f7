# kind: logic
# why: turns an error inside fn into an infinite time instead of letting it reach the caller
# fails-with: propagate
def fair_timer(fn, *, clock, sync, warmup=2, calls=10):
    if calls < 1 or warmup < 0:
        raise ValueError("calls must be >= 1 and warmup >= 0")
    try:
        for _ in range(warmup):
            fn()
        sync()
        start = clock()
        for _ in range(calls):
            fn()
        sync()
    except RuntimeError:
        return float("inf")
    return (clock() - start) / calls

# The "test seen before this event" flags from itertools.accumulate over the events, then one filter.
from itertools import accumulate


def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    is_test_eval = [e.get("event") == "eval" and e.get("split") == "test" for e in log]
    seen_before = [False, *accumulate(is_test_eval, lambda a, b: a or b)][:len(log)]
    return [i for i, (e, seen) in enumerate(zip(log, seen_before))
            if e.get("by") == "test" or (seen and e.get("event") != "end")]

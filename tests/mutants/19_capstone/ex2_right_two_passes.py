# Two passes: where the first test evaluation is, then one list comprehension over the positions.
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    first = next((i for i, e in enumerate(log) if e.get("event") == "eval" and e.get("split") == "test"), len(log))
    return [i for i, e in enumerate(log)
            if e.get("by") == "test" or (i > first and e.get("event") != "end")]

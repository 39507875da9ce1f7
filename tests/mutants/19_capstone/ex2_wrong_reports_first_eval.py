# kind: logic
# why: marks the test set as seen before looking at the event: the first test evaluation itself is reported
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if event.get("event") == "eval" and event.get("split") == "test":
            seen_test = True
        if event.get("by") == "test" or (seen_test and event.get("event") != "end"):
            leaks.append(i)
    return leaks

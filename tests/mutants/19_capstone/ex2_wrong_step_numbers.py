# kind: logic
# why: returns the events' step numbers, not their positions in the log
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if event.get("by") == "test" or (seen_test and event.get("event") != "end"):
            leaks.append(event.get("step", i))
        if event.get("event") == "eval" and event.get("split") == "test":
            seen_test = True
    return sorted(set(leaks))

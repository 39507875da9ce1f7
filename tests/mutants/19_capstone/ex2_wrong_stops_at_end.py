# kind: structure
# why: stops reading at the first "end": anything logged after it (a second run's stop, a late evaluation) is missed
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if event.get("event") == "end":
            if event.get("by") == "test":
                leaks.append(i)
            break
        if event.get("by") == "test" or seen_test:
            leaks.append(i)
        if event.get("event") == "eval" and event.get("split") == "test":
            seen_test = True
    return leaks

# kind: validation
# why: checks "by": "test" on stop events only: a learning rate or checkpoint chosen on test is missed
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if (event.get("event") == "stop" and event.get("by") == "test") or (seen_test and event.get("event") != "end"):
            leaks.append(i)
        if event.get("event") == "eval" and event.get("split") == "test":
            seen_test = True
    return leaks

# kind: inputs
# why: any event with "split": "test" counts as the test evaluation (loading the test set is not evaluating it)
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if event.get("by") == "test" or (seen_test and event.get("event") != "end"):
            leaks.append(i)
        if event.get("split") == "test":
            seen_test = True
    return leaks

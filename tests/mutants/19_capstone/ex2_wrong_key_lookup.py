# kind: inputs
# why: reads event["split"] on every evaluation: an evaluation logged without a split raises KeyError
# fails-with: KeyError.*event.get
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        if event.get("by") == "test" or (seen_test and event["event"] != "end"):
            leaks.append(i)
        if event["event"] == "eval" and event["split"] == "test":
            seen_test = True
    return leaks

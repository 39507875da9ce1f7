# kind: state
# why: fills in the missing keys on the caller's events (setdefault) to read them uniformly: the log is changed
# fails-with: changed the log
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    leaks, seen_test = [], False
    for i, event in enumerate(log):
        event.setdefault("by", None)
        event.setdefault("split", None)
        if event["by"] == "test" or (seen_test and event["event"] != "end"):
            leaks.append(i)
        if event["event"] == "eval" and event["split"] == "test":
            seen_test = True
    return leaks

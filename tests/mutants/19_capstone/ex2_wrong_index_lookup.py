# kind: logic
# why: finds each leaking event's position with log.index(event): an event equal to an earlier one gets its index
# fails-with: expected the leaking events
def find_test_leaks(log: list[dict]) -> list[int]:
    """Indices of the events in `log` that leak the test set (increasing, each once)."""
    first_test = next((e for e in log if e.get("event") == "eval" and e.get("split") == "test"), None)
    after = log[log.index(first_test) + 1:] if first_test is not None else []
    leaking = [e for e in log if e.get("by") == "test"] + [e for e in after if e.get("event") != "end"]
    return sorted({log.index(e) for e in leaking})

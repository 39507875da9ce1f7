"""Reading nbgrader's autograde log: which submissions failed, which one stopped a run, progress lines."""

from __future__ import annotations

import re

Submission = tuple[str, str]  # (student, assignment)
EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt):")  # "x.y.SomeError: ..."


def records(text: str) -> list[str]:
    """nbgrader's log split into records (a record starts with '[')."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") or not out:
            out.append(line)
        else:
            out[-1] += "\n" + line
    return out


def failures(text: str) -> dict[Submission, str]:
    """Submissions nbgrader reported as failed, each with the last line of its traceback."""
    failed: dict[Submission, str] = {}
    recs = records(text)
    for i, record in enumerate(recs):
        m = re.search(r"There was an error processing assignment: .*[/\\]([^/\\]+)[/\\]([^/\\]+)$", record)
        if m:
            trace = recs[i + 1] if i + 1 < len(recs) else ""
            lines = [line.strip() for line in trace.splitlines() if line.strip()]
            raised = [line for line in lines if EXCEPTION.match(line)]  # not a quoted cell's last line
            failed[(m.group(1), m.group(2))] = (raised or lines or ["nbgrader error (see the log)"])[-1]
    summary = r"There was an error processing assignment '([^']*)' for student '([^']*)'"
    for assignment, student in re.findall(summary, text):
        failed.setdefault((student, assignment), "nbgrader error (see the log)")
    return failed


def last_submission(text: str) -> Submission | None:
    """The (student, assignment) nbgrader was working on last (to name the one that stopped a run)."""
    found = re.findall(r"(?:submitted|autograded)[/\\]([^/\\\s]+)[/\\]([^/\\\s'\"]+)[/\\]", text)
    return found[-1] if found else None


def progress(line: str) -> str | None:
    """The line to print for one line of nbgrader's output while it grades (or None)."""
    m = re.search(r"Autograding .*[/\\]autograded[/\\]([^/\\]+)[/\\]([^/\\]+)[/\\]", line)
    if m:
        return f"  grading {m.group(2)} {m.group(1)}"
    if "Timeout waiting for execute reply" in line:
        return "    a cell ran out of time and was interrupted"
    return None

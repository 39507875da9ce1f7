"""`make autograde`: pre-check, run every sound submission in a sandbox (JOBS at once), score the runs.

For every selected assignment the pre-check (tools/check_submissions.py) sets damaged submissions
aside. The sound ones are then run by JOBS workers at once (tools/grade_runs.py), each worker one
nbgrader call in a private workspace, pinned to its share of the CPUs, every kernel in a sandbox
(tools/sandbox.py) that sees only its own submission; then ONE nbgrader call scores the runs into
the gradebook (executing nothing), so the gradebook ends as a serial run leaves it. Without
bubblewrap, grading refuses to start unless the instructor says ``UNSAFE=1``.

The lessons save results (``cu.save``): in the sandbox they go to its own tmpfs, without it to a
temporary folder; either way they are deleted, so a student's smoke run never lands in ``results/``.

The logs (``autograde*.log``, ``merge.log``) and the failures per assignment
(``autograde-<a>.json``, read by ``make grades``) are kept in autograded/.logs/.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tools import sandbox
from tools.autograde_log import failures, last_submission, progress
from tools.check_submissions import find_problems, submitted_assignments
from tools.grade_runs import RUNS, Submission, digest, execute, merge
from tools.grades import grade_rows, print_rows
from tools.nbgrader_run import REPORTS, ROOT, nbgrader, pattern, without_restored

__all__ = ["Round", "autograde", "cpu_sets", "failures", "last_submission", "prepare", "report", "restored_line",
           "safety", "selection"]


def restored_line(count: int) -> str:
    """The one line a run prints instead of nbgrader's "checksum has changed" note per restored cell."""
    return (f"{count} hidden-test cell(s) restored from the release (nbgrader's 'checksum has changed' notes, "
            "expected; left out of the log)")


def cpu_sets(jobs: int, cpus: list[int] | None = None) -> list[list[int]]:
    """The CPUs of each of ``jobs`` workers: contiguous equal shares (shared round-robin if too few)."""
    cpus = cpus if cpus is not None else sorted(os.sched_getaffinity(0))
    if jobs >= len(cpus):
        return [[cpus[i % len(cpus)]] for i in range(jobs)]
    return [cpus[i * len(cpus) // jobs:(i + 1) * len(cpus) // jobs] for i in range(jobs)]


def safety(unsafe: bool) -> tuple[bool, str | None]:
    """(run in a sandbox?, the line that refuses to start, or None)."""
    if sandbox.find():
        return True, None
    if unsafe:
        return False, None
    return False, f"autograde refused: {sandbox.WHY_NOT}"


def selection(assignments: list[str], unsafe: bool) -> tuple[bool, list[str]] | int:
    """(run in a sandbox?, the assignments to grade), or the exit status: refused (2), nothing to do (0)."""
    sandboxed, refusal = safety(unsafe)
    if refusal:
        print(refusal)
        return 2
    assignments = assignments or submitted_assignments(ROOT)
    if not assignments:
        print("nothing to grade: submitted/<student>/<assignment>/ is empty (make collect FROM=...)")
        return 0
    return sandboxed, assignments


@dataclass
class Round:
    """One grading round: what was selected, set aside and left to run."""

    assignments: list[str]
    students: dict[str, list[str]] = field(default_factory=dict)
    problems: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    pending: list[Submission] = field(default_factory=list)
    digests: dict[Submission, str] = field(default_factory=dict)


def prepare(assignments: list[str], only: list[str] | None, precheck: bool, template: Path) -> Round | int:
    """Register the assignments (gradebook and ``template``), pre-check, clear old results; or an exit status."""
    with tempfile.TemporaryDirectory(prefix="course-register-") as tmp:
        # generate_assignment stores the graded cells (with hidden tests) in the gradebook; its
        # output goes to a temporary folder, so the committed notebooks/ are not touched.
        rc, text = nbgrader(["generate_assignment", f"--assignment={pattern(assignments)}", "--force",
                             f"--CourseDirectory.release_directory={Path(tmp) / 'release'}"],
                            log=REPORTS / "register.log")
    if rc:
        print(without_restored(text))
        return rc
    template.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "gradebook.db", template)
    r = Round(assignments)
    for a in assignments:
        everyone = sorted(p.parent.name for p in ROOT.glob(f"submitted/*/{a}") if p.is_dir())
        r.students[a] = [s for s in everyone if not only or s in only]
        found = find_problems(ROOT, a)[0] if precheck else {}
        r.problems[a] = {s: p for s, p in found.items() if s in r.students[a]}
        for s in r.students[a]:  # results are only ever those of the current submissions
            shutil.rmtree(ROOT / "autograded" / s / a, ignore_errors=True)
            if s in r.problems[a]:
                shutil.rmtree(ROOT / "feedback" / s / a, ignore_errors=True)
                shutil.rmtree(RUNS / a / s, ignore_errors=True)
        r.pending += [(s, a) for s in r.students[a] if s not in r.problems[a]]
        print(f"{a}: {len(r.students[a]) - len(r.problems[a])} submission(s) to grade in the smoke profile; "
              f"{len(r.problems[a])} damaged, set aside")
    r.digests = {s: digest(*s) for s in r.pending}
    return r


def report(r: Round, failed: dict[Submission, str]) -> int:
    """Write autograde-<a>.json and print each assignment's rows; 1 if any submission is not graded."""
    not_graded = 0
    for a in r.assignments:
        failed_here = {s: why for (s, aa), why in failed.items() if aa == a}
        for s in failed_here:
            shutil.rmtree(ROOT / "feedback" / s / a, ignore_errors=True)
        path = REPORTS / f"autograde-{a}.json"
        old = json.loads(path.read_text())["failed"] if path.exists() else {}
        kept = {s: why for s, why in old.items() if s not in r.students[a]}  # students not regraded now
        damaged = {s: "; ".join(p) for s, p in r.problems[a].items()}
        path.write_text(json.dumps({"damaged": damaged, "failed": {**kept, **failed_here}}, indent=1))
        not_graded += len(damaged) + len(failed_here)
        print(a)
        print_rows(grade_rows(a))
    if not_graded:
        print(f"{not_graded} submission(s) NOT graded (listed above, with the reason); all others were. "
              "Fix them as INSTRUCTORS.md says and run make autograde again.")
    return 1 if not_graded else 0


def autograde(assignments: list[str], timeout: int | None, only: list[str] | None = None,
              precheck: bool = True, jobs: int | None = None, unsafe: bool = False) -> int:
    """Grade the submissions of these assignments (all with submissions when empty); see the module doc.

    ``only`` grades just these students; ``precheck=False`` hands damaged submissions to nbgrader
    too (to exercise the fallback); ``jobs`` workers run at once (default: one per CPU).
    """
    start = selection(assignments, unsafe)
    if isinstance(start, int):
        return start
    sandboxed, assignments = start
    REPORTS.mkdir(parents=True, exist_ok=True)
    for old in [REPORTS / "autograde.log", REPORTS / "merge.log", *REPORTS.glob("autograde-worker*.log")]:
        old.unlink(missing_ok=True)
    r = prepare(assignments, only, precheck, REPORTS / "template.db")
    if isinstance(r, int):
        return r
    jobs = max(1, min(jobs or len(os.sched_getaffinity(0)), len(r.pending) or 1))
    chunks = [r.pending[i::jobs] for i in range(jobs)]
    shares = cpu_sets(jobs)
    print(f"running {len(r.pending)} submission(s) with {jobs} worker(s) at once, "
          + ("each kernel in a sandbox (bubblewrap)" if sandboxed else
             "UNSAFE=1: WITHOUT a sandbox, with your rights"))
    t0, started, lock = time.perf_counter(), itertools.count(1), threading.Lock()

    def echo(line: str) -> str | None:  # "  [3/40] grading 05_optimizers alice", in the order they start
        shown = progress(line)
        if shown and shown.startswith("  grading "):
            with lock:
                return f"  [{next(started)}/{len(r.pending)}] {shown.strip()}"
        return shown

    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(execute, chunk, template=REPORTS / "template.db", runs=RUNS, digests=r.digests,
                               slot=i, cpus=shares[i], timeout=timeout, sandboxed=sandboxed, echo=echo)
                   for i, chunk in enumerate(chunks) if chunk]
        done = [f.result() for f in futures]
    failed = {s: why for f, _ in done for s, why in f.items()}
    print(restored_line(sum(n for _, n in done)))
    failed.update(merge([s for s in r.pending if s not in failed]))
    where = "were deleted with their sandboxes" if sandboxed else "went to a temporary folder, now deleted"
    print(f"ran and scored {len(r.pending) - len(failed)} of {len(r.pending)} in {time.perf_counter() - t0:.0f} s; "
          f"results the notebooks saved {where}; results/ is untouched")
    return report(r, failed)

"""Grading in two steps: *run* each submission where it cannot harm anything, then *score* the runs.

1. :func:`execute` runs a list of submissions in ONE ``nbgrader autograde`` call inside a private
   workspace (its own copy of the registered gradebook, its own staging folders), each kernel in a
   sandbox (tools/sandbox.py), pinned to the worker's CPUs. It writes one *run* per submission to
   the runs folder, ``autograded/.runs/<assignment>/<student>/``: the executed notebook and
   ``run.json`` (the submission's digest, and why it failed, if it did). Workers share nothing,
   so any number can run at once: threads of ``make autograde JOBS=N``, or SLURM array tasks.
2. :func:`merge` scores the finished runs into the course's gradebook in ONE nbgrader call that
   executes nothing (``COURSE_GRADING_PHASE=merge`` in nbgrader_config.py: no ClearOutput, no
   Execute), so the gradebook ends as if nbgrader had executed them itself. A merged run is marked;
   merging again changes nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tools import sandbox
from tools.autograde_log import failures, last_submission, progress, records
from tools.nbgrader_run import REPORTS, ROOT, nbgrader, pattern, restored_cells

RUNS = ROOT / "autograded" / ".runs"
RUN_FILE = "run.json"
MAX_RESTARTS = 5  # how often one worker restarts nbgrader after it stopped on one submission
Submission = tuple[str, str]  # (student, assignment)


def digest(student: str, assignment: str, root: Path = ROOT) -> str:
    """SHA-256 of a submission's files (names and bytes): which hand-in a run belongs to."""
    h = hashlib.sha256()
    folder = root / "submitted" / student / assignment
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def run_folder(runs: Path, submission: Submission) -> Path:
    """Where the run of a submission is kept."""
    student, assignment = submission
    return runs / assignment / student


def read_run(runs: Path, submission: Submission) -> dict | None:
    """The run's record (``digest``, ``failed``, ``merged``, …), or None when there is none."""
    path = run_folder(runs, submission) / RUN_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def finished(runs: Path, submission: Submission, wanted: str) -> bool:
    """Whether a run of exactly this hand-in (same digest) exists."""
    run = read_run(runs, submission)
    return run is not None and run.get("digest") == wanted


def _write_run(runs: Path, submission: Submission, record: dict, executed: Path | None) -> None:
    """Write a run whole or not at all: into a temporary folder, then renamed into place."""
    dest = run_folder(runs, submission)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    if executed is not None:
        for path in executed.glob("*.ipynb"):
            shutil.copy2(path, tmp / path.name)
    (tmp / RUN_FILE).write_text(json.dumps(record, indent=1))
    old = dest.with_name(f".{dest.name}-old-{os.getpid()}-{threading.get_ident()}")
    if dest.exists():
        dest.rename(old)
    tmp.rename(dest)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def sandbox_slot(limit: int = 1000) -> Iterator[int]:
    """A sandbox user number no other grader on this machine holds now (a lock file per number).

    Each slot's kernels run as their own user (uid 60000 + slot when grading as root): its process
    limit is its own, and what one sandbox leaves running is killed before the next starts, which
    must never hit another grader's kernel (two courses graded at once, two SLURM tasks on a node).
    """
    for slot in range(limit):
        fd = os.open(Path(tempfile.gettempdir()) / f"course-sandbox-slot-{slot}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield slot
        finally:
            os.close(fd)  # releases the lock
        return
    raise RuntimeError(f"all {limit} sandbox slots are taken on this machine")


def execute(items: list[Submission], *, template: Path, runs: Path, digests: dict[Submission, str],
            slot: int = 0, cpus: list[int] | None = None, timeout: int | None = None, sandboxed: bool = True,
            root: Path = ROOT, echo: Callable[[str], str | None] = progress) -> tuple[dict[Submission, str], int]:
    """Run these submissions (one worker); write a run for each.

    Returns:
        (the failed submissions with why, how many hidden-test cells nbgrader restored).

    ``template`` is a gradebook with the assignments registered; ``sandboxed=False`` runs the
    kernels with the caller's rights (``UNSAFE=1``).
    """
    cpus = cpus or sorted(os.sched_getaffinity(0))
    failed: dict[Submission, str] = {}
    with sandbox_slot() as user, tempfile.TemporaryDirectory(prefix="cg") as tmp:  # short: ipc:// paths are limited
        work = Path(tmp)
        shutil.copy(template, work / "gradebook.db")
        sandbox.write_kernelspec(work / "jupyter")
        (work / "ipc").mkdir()
        env = {"COURSE_PROFILE": "smoke", "COURSE_RESULTS_DIR": str(work / "results"),
               "JUPYTER_PATH": str(work / "jupyter"), "COURSE_SANDBOX_SUBMITTED": str(work / "submitted"),
               "COURSE_SANDBOX_SLOT": str(user), "COURSE_SANDBOX_CPUS": ",".join(map(str, cpus)),
               "OMP_NUM_THREADS": str(len(cpus))}
        args = [f"--CourseDirectory.db_url=sqlite:///{work / 'gradebook.db'}",
                f"--CourseDirectory.submitted_directory={work / 'submitted'}",
                f"--CourseDirectory.autograded_directory={work / 'autograded'}"]
        if sandboxed:
            args += [f"--Execute.kernel_name={sandbox.KERNEL_NAME}", "--KernelManager.transport=ipc",
                     f"--KernelManager.ip={work / 'ipc' / 'k'}"]
        if timeout:
            args.append(f"--Execute.timeout={timeout}")
        pending, restored = list(items), 0
        for _ in range(MAX_RESTARTS + 1):
            if not pending:
                break
            shutil.rmtree(work / "submitted", ignore_errors=True)
            for student, assignment in pending:
                shutil.copytree(root / "submitted" / student / assignment, work / "submitted" / student / assignment)
            rc, text = nbgrader(["autograde", f"--assignment={pattern(sorted({a for _, a in pending}))}", *args],
                                log=REPORTS / f"autograde-worker{slot}.log", echo=echo, cwd=root,
                                cpus=cpus, **env)
            restored += restored_cells(text)
            failed.update({s: r for s, r in failures(text).items() if s in pending})
            done = [s for s in pending if any((work / "autograded" / s[0] / s[1]).glob("*.ipynb"))]
            left = [s for s in pending if s not in done and s not in failed]
            for s in done + [s for s in pending if s in failed]:
                _write_run(runs, s, {"digest": digests[s], "failed": failed.get(s), "slot": slot,
                                     "finished": time.time(), "merged": False},
                           work / "autograded" / s[0] / s[1] if s in done else None)
            if not left or rc == 0:
                for s in left:
                    failed[s] = "nbgrader did not grade it (see the log)"
                    _write_run(runs, s, {"digest": digests[s], "failed": failed[s], "merged": False}, None)
                break
            # nbgrader stopped the whole run on one submission: record it, run the others again
            errors = [r.split("] ", 1)[-1].splitlines()[0] for r in records(text) if "| ERROR]" in r]
            error = errors[-1] if errors else f"exit status {rc}"
            culprit = last_submission(text)
            if culprit not in left:
                culprit = left[0]
            failed[culprit] = f"nbgrader stopped on it: {error}"
            _write_run(runs, culprit, {"digest": digests[culprit], "failed": failed[culprit], "merged": False}, None)
            pending = [s for s in left if s != culprit]
    return failed, restored


def merge(items: list[Submission], runs: Path = RUNS, root: Path = ROOT) -> dict[Submission, str]:
    """Score the unmerged runs of these submissions into the gradebook; return the failed with why.

    The merge stages each executed notebook with the rest of its hand-in (``timestamp.txt``) and
    lets nbgrader score it without executing anything, then marks the run merged.
    """
    failed: dict[Submission, str] = {}
    todo: list[Submission] = []
    for s in items:
        run = read_run(runs, s)
        if run is None:
            continue
        if run.get("failed"):
            failed[s] = run["failed"]
        elif not run.get("merged"):
            todo.append(s)
    if not todo:
        return failed
    with tempfile.TemporaryDirectory(prefix="course-merge-") as tmp:
        staging = Path(tmp) / "submitted"
        for s in todo:
            dest = staging / s[0] / s[1]
            shutil.copytree(root / "submitted" / s[0] / s[1], dest, ignore=shutil.ignore_patterns("*.ipynb"))
            for nb in run_folder(runs, s).glob("*.ipynb"):
                shutil.copy2(nb, dest / nb.name)
        for student, assignment in todo:
            shutil.rmtree(root / "autograded" / student / assignment, ignore_errors=True)
        rc, text = nbgrader(["autograde", f"--assignment={pattern(sorted({a for _, a in todo}))}",
                             f"--CourseDirectory.submitted_directory={staging}"],
                            log=REPORTS / "merge.log", cwd=root, COURSE_GRADING_PHASE="merge")
    failed.update({s: f"scoring failed: {r}" for s, r in failures(text).items() if s in todo})
    for s in todo:
        if s in failed:
            continue
        if not any((root / "autograded" / s[0] / s[1]).glob("*.ipynb")):
            failed[s] = f"scoring failed (nbgrader exit status {rc}; see autograded/.logs/merge.log)"
            continue
        path = run_folder(runs, s) / RUN_FILE
        record = json.loads(path.read_text())
        path.write_text(json.dumps({**record, "merged": True}, indent=1))
    return failed

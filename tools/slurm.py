"""`make autograde-slurm`: grade a large class as a SLURM job array; `make grades` scores what finished.

``prepare`` does what ``make autograde`` does before running anything (pre-check, registration,
a gradebook template), then writes into ``autograded/.slurm/``:

* ``manifest.json``: the submissions to run (student, assignment, digest of the hand-in), in chunks;
* ``grade.sbatch``: an array job with one task per chunk; task *i* runs
  ``python tools/grading.py autograde-task autograded/.slurm/manifest.json i``, which runs its
  chunk's submissions that have no run yet (each kernel in a sandbox, tools/grade_runs.py) and
  writes each run to ``autograded/.runs/`` (a shared folder on a cluster).

and submits it with ``sbatch`` when there is one (``SUBMIT=0``: only write it). ``make grades``
then scores every finished run into the gradebook (tools/grade_runs.merge): merging twice changes
nothing, and submitting the same script again runs only what is missing (a failed or preempted task).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tools.autograding import Round, prepare, report, safety, selection
from tools.grade_runs import RUNS, digest, execute, finished, merge, read_run
from tools.nbgrader_run import REPORTS, ROOT

BATCH = ROOT / "autograded" / ".slurm"


def write_batch(r: Round, per_task: int, timeout: int | None, sbatch_args: str) -> Path:
    """Write manifest.json and grade.sbatch for the pending submissions; return the script."""
    BATCH.mkdir(parents=True, exist_ok=True)
    (BATCH / "logs").mkdir(exist_ok=True)
    items = [[s, a, r.digests[(s, a)]] for s, a in r.pending]
    chunks = [list(range(i, min(i + per_task, len(items)))) for i in range(0, len(items), per_task)]
    manifest = {"items": items, "chunks": chunks, "timeout": timeout, "assignments": r.assignments,
                "students": r.students, "damaged": {a: {s: "; ".join(p) for s, p in d.items()}
                                                    for a, d in r.problems.items()}}
    (BATCH / "manifest.json").write_text(json.dumps(manifest, indent=1))
    python = shlex.quote(str(Path(sys.executable)))
    script = BATCH / "grade.sbatch"
    script.write_text(f"""#!/bin/bash
# Written by `make autograde-slurm`: one array task per chunk of {per_task} submission(s).
# Submitting it again runs only the submissions that have no run yet; then: make grades
#SBATCH --job-name=course-autograde
#SBATCH --array=0-{max(0, len(chunks) - 1)}
#SBATCH --cpus-per-task=1
#SBATCH --output={BATCH / 'logs' / 'task-%a.log'}
{''.join(f'#SBATCH {arg}' + chr(10) for arg in shlex.split(sbatch_args))}set -euo pipefail
cd {shlex.quote(str(ROOT))}
export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"
exec {python} tools/grading.py autograde-task {shlex.quote(str(BATCH / 'manifest.json'))} "$SLURM_ARRAY_TASK_ID"
""")
    script.chmod(0o755)
    return script


def autograde_slurm(assignments: list[str], timeout: int | None, only: list[str] | None, per_task: int,
                    submit: bool, unsafe: bool, sbatch_args: str = "", wait: bool = False) -> int:
    """Prepare the array (and submit it when ``submit`` and sbatch exists; ``wait``: until it ends)."""
    start = selection(assignments, unsafe)
    if isinstance(start, int):
        return start
    r = prepare(start[1], only, True, BATCH / "template.db")
    if isinstance(r, int):
        return r
    todo = [s for s in r.pending if not finished(RUNS, s, r.digests[s])]
    for s in r.pending:  # prepare cleared autograded/: runs kept from an earlier array are scored again
        run = read_run(RUNS, s)
        if s not in todo and run is not None and run.get("merged"):
            (RUNS / s[1] / s[0] / "run.json").write_text(json.dumps({**run, "merged": False}, indent=1))
    script = write_batch(r, max(1, per_task), timeout, sbatch_args)
    print(f"{len(r.pending)} submission(s) in {script.relative_to(ROOT)}; {len(todo)} without a run yet")
    if not submit or shutil.which("sbatch") is None:
        print(f"submit it with: sbatch {script}   (then, when it has finished: make grades)")
        return 0
    proc = subprocess.run(["sbatch", "--parsable", *(["--wait"] if wait else []), str(script)],
                          capture_output=True, text=True)
    if proc.returncode:
        print(f"sbatch failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.returncode
    job = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else "?"
    print(f"submitted job {job}" + ("; it has finished: make grades" if wait else
                                    "; when it has finished (squeue shows it no more): make grades"))
    return 0


def autograde_task(manifest_path: Path, index: int) -> int:
    """One array task: run the submissions of chunk ``index`` that have no run of this hand-in yet."""
    manifest = json.loads(manifest_path.read_text())
    if not 0 <= index < len(manifest["chunks"]):
        print(f"task {index}: no such chunk (0 to {len(manifest['chunks']) - 1})")
        return 2
    items = [manifest["items"][i] for i in manifest["chunks"][index]]
    digests = {(s, a): d for s, a, d in items}
    todo = [(s, a) for s, a, d in items if not finished(RUNS, (s, a), d)]
    stale = [(s, a) for s, a, d in items if digest(s, a) != d]
    if stale:
        print(f"task {index}: hand-ins changed since make autograde-slurm (run it again): {stale}")
    todo = [s for s in todo if s not in stale]
    print(f"task {index}: {len(todo)} of {len(items)} submission(s) to run")
    sandboxed = safety(os.environ.get("COURSE_UNSAFE") == "1")[0]
    failed, _ = execute(todo, template=manifest_path.parent / "template.db", runs=RUNS, digests=digests,
                     slot=index % 1000, timeout=manifest.get("timeout"), sandboxed=sandboxed)
    for s, why in failed.items():
        print(f"task {index}: {s[0]}/{s[1]} failed: {why}")
    return 0


def merge_batch() -> int:
    """Score every finished, unmerged run of the last array into the gradebook (``make grades`` calls it)."""
    path = BATCH / "manifest.json"
    if not path.exists():
        return 0
    manifest = json.loads(path.read_text())
    items = [(s, a) for s, a, d in manifest["items"] if finished(RUNS, (s, a), d)]
    unmerged = [s for s in items if not (read_run(RUNS, s) or {}).get("merged")]
    missing = [(s, a) for s, a, d in manifest["items"] if (s, a) not in items]
    if not unmerged and not missing:
        return 0
    print(f"SLURM array: scoring {len(unmerged)} finished run(s); {len(missing)} without a run yet"
          + (" (submit autograded/.slurm/grade.sbatch again)" if missing else ""))
    failed = merge(unmerged)
    r = Round(manifest["assignments"], manifest["students"],
              {a: {s: [why] for s, why in d.items()} for a, d in manifest["damaged"].items()},
              [(s, a) for s, a, _ in manifest["items"]], {(s, a): d for s, a, d in manifest["items"]})
    failed.update({s: "no run yet: submit autograded/.slurm/grade.sbatch again" for s in missing})
    REPORTS.mkdir(parents=True, exist_ok=True)
    report(r, failed)
    return 0

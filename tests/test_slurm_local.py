"""A real single-node SLURM on localhost (tests/slurm_local.py) runs job arrays: all tasks, failures seen.

Needs root and Debian's slurm-wlm and munge; skipped otherwise with the reason.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from slurm_local import local_slurm, slurm_available

# Each task writes its index to a file in the job's working folder (inside the cluster's folder) and prints
# the Python its PATH finds and a variable of the submitting environment: sbatch's --export=ALL carries both.
TASK = """#!/bin/bash
echo "$SLURM_ARRAY_TASK_ID" > "task-$SLURM_ARRAY_TASK_ID.txt"
python -c 'import sys; print(sys.prefix)'
echo "$SLURM_LOCAL_PROBE"
if [ "$SLURM_ARRAY_TASK_ID" = "$FAIL_TASK" ]; then exit 1; fi
"""


def _submit(work: Path, env: dict[str, str], fail_task: str) -> subprocess.Popen:
    work.mkdir()
    (work / "task.sh").write_text(TASK)
    return subprocess.Popen(["sbatch", "--wait", "--array=0-3", f"--output={work}/out-%a.txt", "task.sh"],
                            cwd=work, env={**env, "FAIL_TASK": fail_task}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
@pytest.mark.slurm
def test_local_slurm_runs_an_array_and_reports_a_failed_task(tmp_path):
    why = slurm_available()
    if why:
        pytest.skip(why)
    with local_slurm(tmp_path) as slurm_env:
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {**os.environ, **slurm_env, "PATH": path, "SLURM_LOCAL_PROBE": "carried"}
        # both arrays at once: `sbatch --wait` polls after 2 s and then 8 s more, so each takes ~10 s
        jobs = {"good": _submit(tmp_path / "good", env, "none"), "bad": _submit(tmp_path / "bad", env, "2")}
        output = {name: job.communicate(timeout=50)[0] for name, job in jobs.items()}
        returncodes = {name: job.returncode for name, job in jobs.items()}
    assert returncodes["good"] == 0, output["good"]
    assert returncodes["bad"] != 0, output["bad"]
    for name in jobs:
        for task in range(4):
            assert (tmp_path / name / f"task-{task}.txt").read_text() == f"{task}\n"
            out = (tmp_path / name / f"out-{task}.txt").read_text().splitlines()
            assert out == [sys.prefix, "carried"], out

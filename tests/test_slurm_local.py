"""A real SLURM on localhost (tests/slurm_local.py) runs job arrays (all tasks, failures seen) and 2-node jobs.

Needs root and Debian's slurm-wlm and munge; skipped otherwise with the reason.
"""

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from slurm_local import NO_MULTIPLE_SLURMD, local_slurm, node_names, slurm_available

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
@pytest.mark.grading
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


# A 2-node job: srun starts one task on each node (each writes its node's name); the first node of the job's
# node list, as `scontrol show hostnames` gives it, resolves to this machine without /etc/hosts.
TWO_NODES = """#!/bin/bash
scontrol show hostnames "$SLURM_JOB_NODELIST" > hosts.txt
srun bash -c 'echo "$SLURMD_NODENAME" > "node-$SLURM_NODEID.txt"'
"""


def test_node_names():
    assert node_names(1) == ["localhost"]
    assert node_names(3) == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    with pytest.raises(ValueError):
        node_names(0)


@pytest.mark.slow
@pytest.mark.grading
@pytest.mark.slurm
def test_local_slurm_with_two_nodes_runs_a_job_step_on_each(tmp_path):
    why = slurm_available()
    if why:
        pytest.skip(why)
    try:  # the cluster in a short folder: slurmstepd's unix sockets go in spool/<node>/ (sun_path: 108 bytes)
        with tempfile.TemporaryDirectory(prefix="slurm2-") as c, local_slurm(Path(c), cpus=1, nodes=2,
                                                                             min_job_age=4) as slurm_env:
            (tmp_path / "job.sh").write_text(TWO_NODES)
            job = subprocess.run(["sbatch", "--wait", "--nodes=2", f"--output={tmp_path}/out.txt", "job.sh"],
                                 cwd=tmp_path, env={**os.environ, **slurm_env}, capture_output=True, text=True,
                                 timeout=50, check=False)
    except RuntimeError as e:
        if str(e) == NO_MULTIPLE_SLURMD:
            pytest.skip(str(e))
        raise
    assert job.returncode == 0, job.stdout + job.stderr + (tmp_path / "out.txt").read_text()
    hosts = (tmp_path / "hosts.txt").read_text().split()
    assert hosts == node_names(2) and socket.gethostbyname(hosts[0]) == "127.0.0.1"
    assert [(tmp_path / f"node-{i}.txt").read_text().strip() for i in range(2)] == node_names(2)

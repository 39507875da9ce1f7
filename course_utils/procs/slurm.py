"""Run a SLURM batch script as written on this machine: :func:`slurm_locally`, every "node" localhost.

Stand-ins for ``srun`` and ``scontrol`` make localhost every node, so the recipe's own torchrun
line, c10d rendezvous included, is what runs; each rank hands its results back with
:func:`~course_utils.procs.launch.report`, as under :func:`~course_utils.procs.launch.torchrun`.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from .launch import RESULTS_ENV, Launch
from .supervise import pump, stop, wait_all

__all__ = ["slurm_locally"]

_SRUN = """#!/bin/bash
# srun stand-in (course_utils.procs.slurm.slurm_locally): one task per node, all on this machine, each with the
# variables SLURM gives a task; srun's own options (--name=value) are skipped; like --kill-on-bad-exit, a
# task that fails stops the others; the exit code is the failed task's.
while [[ $1 == -* ]]; do shift; done
pids=()
for ((i = 0; i < SLURM_NNODES; i++)); do
  SLURM_NODEID=$i SLURM_PROCID=$i SLURM_LOCALID=0 SLURM_NTASKS=$SLURM_NNODES SLURM_STEP_ID=0 "$@" &
  pids+=($!)
done
rc=0
for _ in "${pids[@]}"; do
  wait -n
  s=$?
  if ((s != 0 && rc == 0)); then rc=$s; kill "${pids[@]}" 2>/dev/null; fi
done
exit $rc
"""

_SCONTROL = """#!/bin/bash
# scontrol stand-in (course_utils.procs.slurm.slurm_locally): "scontrol show hostnames LIST" names every node of
# the job 127.0.0.1, this machine; nothing else is supported.
if [[ $1 == show && $2 == hostnames ]]; then
  for ((i = 0; i < SLURM_NNODES; i++)); do echo 127.0.0.1; done
else
  echo "scontrol stand-in: only 'show hostnames' is supported" >&2; exit 1
fi
"""


def slurm_locally(batch_script: str | Path, *, nnodes: int = 2, cwd: str | Path | None = None,
                  cpus_per_task: int | None = None, env: Mapping[str, str] | None = None, timeout: float = 120.0,
                  stream: bool = False, python: str | None = None) -> Launch:
    """Run a SLURM batch script as written on this machine: ``nnodes`` "nodes" that are all localhost.

    ``bash batch_script`` runs with a temporary folder first on ``PATH`` holding three stand-ins:
    ``srun`` starts its command once per node (one task per node, in parallel) with the variables
    SLURM gives each task (``SLURM_NODEID``, ``SLURM_PROCID``, ``SLURM_LOCALID``, ``SLURM_NTASKS``);
    ``scontrol show hostnames`` names every node ``127.0.0.1``; ``python`` is this interpreter (or
    ``python``). The job's variables are set as sbatch would: ``SLURM_JOB_ID`` (a random number),
    ``SLURM_JOB_NODELIST``, ``SLURM_NNODES``, ``SLURM_JOB_NUM_NODES``, ``SLURM_NTASKS_PER_NODE=1``,
    ``SLURM_CPUS_PER_TASK`` (``cpus_per_task``, by default this machine's cores shared among the
    nodes) and ``SLURM_SUBMIT_DIR``; ``env`` adds or overrides any (``SLURM_GPUS_ON_NODE``...). The
    ``#SBATCH`` lines are comments to bash: they are not read. Everything the script starts is
    real: torchrun agents, their rendezvous and the ranks. No process outlives the call (as with
    :func:`~course_utils.procs.launch.torchrun`): a failure or the ``timeout`` stops every process
    the script started.

    Returns:
        A :class:`~course_utils.procs.launch.Launch`: every rank's
        :func:`~course_utils.procs.launch.report`, in rank order; ``env`` holds the SLURM
        variables the job had.

    Raises:
        FileNotFoundError: no such script.
        RuntimeError: the script failed or ran past ``timeout`` (the output's last lines are in the
            message), or no rank reported.
    """
    batch_script = Path(batch_script).resolve()
    if not batch_script.is_file():
        raise FileNotFoundError(f"no batch script at {batch_script}")
    if nnodes < 1:
        raise ValueError(f"nnodes must be >= 1, got {nnodes}")
    job_id = str(random.SystemRandom().randrange(100_000, 1_000_000))
    cores = cpus_per_task or max(1, (os.cpu_count() or 1) // nnodes)
    slurm = {"SLURM_JOB_ID": job_id, "SLURM_JOBID": job_id, "SLURM_JOB_NAME": batch_script.stem,
             "SLURM_JOB_NODELIST": f"node[0-{nnodes - 1}]" if nnodes > 1 else "node0",
             "SLURM_NNODES": str(nnodes), "SLURM_JOB_NUM_NODES": str(nnodes), "SLURM_NTASKS_PER_NODE": "1",
             "SLURM_CPUS_PER_TASK": str(cores), "SLURM_SUBMIT_DIR": str(Path(cwd or batch_script.parent).resolve()),
             **(env or {})}
    with tempfile.TemporaryDirectory(prefix="course-slurm-") as tmp:
        bin_dir = Path(tmp) / "bin"
        bin_dir.mkdir()
        results = Path(tmp) / "results"
        results.mkdir()
        for name, text in (("srun", _SRUN), ("scontrol", _SCONTROL),
                           ("python", f'#!/bin/sh\nexec "{python or sys.executable}" "$@"\n')):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        child_env = {**os.environ, "PYTHONUNBUFFERED": "1", **slurm, RESULTS_ENV: str(results),
                     "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        child_env.pop("OMP_NUM_THREADS", None)  # the batch script sets it, or torchrun does
        command = ["bash", str(batch_script)]
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env,
                             cwd=cwd or batch_script.parent)
        output: list[str] = []
        reader = threading.Thread(target=pump, args=(p.stdout, output, stream), daemon=True)
        reader.start()
        try:
            codes = wait_all([p], timeout)
        finally:  # no process outlives the call: bash, the srun stand-in, the agents and their ranks
            stop(p)
            reader.join(timeout=5)
        text = "".join(output)
        tail = "\n".join(text.strip().splitlines()[-15:])
        if codes is None:
            raise RuntimeError(f"the batch script ran past its {timeout:.0f} s timeout; every process it started "
                               f"was stopped. Its last output:\n{tail}")
        if codes[0]:
            raise RuntimeError(f"the batch script exited with {codes[0]}:\n{tail}")
        files = sorted(results.glob("rank*.json"), key=lambda f: int(f.stem[4:]))
        ranks = [json.loads(f.read_text()) for f in files]
    if not ranks:
        raise RuntimeError("no rank reported results: call cu.procs.launch.report(...) in every rank of the script")
    if [r["rank"] for r in ranks] != list(range(ranks[0]["world_size"])):
        raise RuntimeError(f"ranks {[r['rank'] for r in ranks]} of a world of {ranks[0]['world_size']} reported")
    return Launch(commands=[command], returncodes=codes, ranks=ranks, output=text, env=slurm)

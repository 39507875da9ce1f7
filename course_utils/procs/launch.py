"""Start a training script under ``torchrun`` from a notebook: rank 0's output streamed, every rank's results back.

:func:`torchrun` runs ``python -m torch.distributed.run`` (what the ``torchrun`` command runs) on
this machine: one agent with ``nproc_per_node`` processes, or ``nnodes`` agents on localhost that
meet at one rendezvous, as the nodes of a cluster would (static by default: fixed membership, so
no agent waits at exit for an elastic rendezvous to close). The script is an ordinary file; each
rank calls :func:`report` with what it measured, and the launch returns those dicts in rank order.
Nothing is simulated: the processes, the rendezvous and the collectives are real (gloo on a CPU,
NCCL on GPUs, chosen by the script). No process outlives a call: a rank that fails ends the
launch with that rank's own error, a timeout stops every agent and rank.

:func:`~course_utils.procs.slurm.slurm_locally` runs a SLURM batch script the same way, every node
localhost; :mod:`course_utils.procs.supervise` watches and stops the processes of both.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .supervise import pump, stop, wait_all

__all__ = ["Launch", "RESULTS_ENV", "free_port", "report", "torchrun", "torchrun_command"]

#: The environment variable that tells a rank where :func:`report` writes.
RESULTS_ENV = "COURSE_RANK_RESULTS"


def free_port() -> int:
    """A TCP port on localhost that is free now (for a rendezvous endpoint)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def report(data: Mapping[str, Any]) -> Path | None:
    """Called by a rank of a launched script: hand ``data`` (JSON values) back to :func:`torchrun`.

    Written to ``$COURSE_RANK_RESULTS/rank<RANK>.json``; outside a launch (the variable unset) it
    does nothing and returns None, so the script also runs on its own.
    """
    where = os.environ.get(RESULTS_ENV)
    if not where:
        return None
    rank = int(os.environ.get("RANK", "0"))
    path = Path(where) / f"rank{rank}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"rank": rank, "world_size": int(os.environ.get("WORLD_SIZE", "1")), **dict(data)}))
    tmp.replace(path)  # a rank that dies mid-write leaves no half-written result
    return path


def torchrun_command(script: str | Path, *, nproc_per_node: int | str = 2, nnodes: int = 1,
                     node_rank: int | None = None, rdzv_endpoint: str | None = None, rdzv_backend: str = "c10d",
                     rdzv_id: str | None = None, args: Sequence[str] = (), python: str | None = None,
                     rank0_only: bool = True, log_dir: str | Path | None = None) -> list[str]:
    """The command line of one torchrun agent (what a terminal or a SLURM script would run).

    One node: ``--standalone`` (a local rendezvous on a free port). Several: ``--nnodes`` and a
    rendezvous at ``rdzv_endpoint`` (``host:port``, the same for every node), either

    - ``rdzv_backend="c10d"`` (elastic, what a cluster recipe uses): the same line on every node,
      with ``rdzv_id``, one per job (``$SLURM_JOB_ID`` under SLURM); the rendezvous assigns the node
      ranks, so there is no ``node_rank`` (torchrun ignores ``--node-rank`` with c10d), or
    - ``rdzv_backend="static"``: node 0 hosts the store at that address (``--master-addr``,
      ``--master-port``), each node passes its own ``node_rank``; fixed membership.

    ``nproc_per_node``: a number, or a string torchrun reads (``"gpu"``, or a shell variable such as
    ``"$GPUS"`` in a batch script). ``log_dir``: every rank's stdout and stderr also go to files
    there (``--log-dir``, ``--tee``).
    """
    if (isinstance(nproc_per_node, int) and nproc_per_node < 1) or nnodes < 1:
        raise ValueError(f"nproc_per_node and nnodes must be >= 1, got {nproc_per_node}, {nnodes}")
    cmd = [python or sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}"]
    if nnodes == 1 and rdzv_endpoint is None:
        if node_rank not in (None, 0):
            raise ValueError(f"one node has node_rank 0, got {node_rank}")
        cmd.append("--standalone")
    else:
        if rdzv_endpoint is None:
            raise ValueError("several nodes need rdzv_endpoint='host:port' (the same for every node)")
        cmd.append(f"--nnodes={nnodes}")
        if rdzv_backend == "c10d":
            if node_rank is not None:
                raise ValueError("node_rank is only used with rdzv_backend='static': with c10d the rendezvous "
                                 "assigns node ranks (torchrun ignores --node-rank)")
            if not rdzv_id:
                raise ValueError("a c10d rendezvous needs rdzv_id, one per job (under SLURM: $SLURM_JOB_ID)")
            cmd += ["--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv_endpoint}", f"--rdzv-id={rdzv_id}"]
        elif rdzv_backend == "static":
            if node_rank is None or not 0 <= node_rank < nnodes:
                raise ValueError(f"a static rendezvous needs each node's node_rank in 0 … {nnodes - 1}, "
                                 f"got {node_rank}")
            host, _, port = rdzv_endpoint.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"rdzv_endpoint must be 'host:port', got {rdzv_endpoint!r}")
            cmd += [f"--node-rank={node_rank}", "--rdzv-backend=static", f"--master-addr={host}",
                    f"--master-port={port}"]
        else:
            raise ValueError(f"rdzv_backend must be 'c10d' or 'static', got {rdzv_backend!r}")
    if rank0_only:
        cmd.append("--local-ranks-filter=0")
    if log_dir is not None:
        cmd += [f"--log-dir={log_dir}", "--tee=3"]
    return [*cmd, str(script), *map(str, args)]


@dataclass
class Launch:
    """What :func:`torchrun` returned: every rank's :func:`report`, in rank order, and the output."""

    commands: list[list[str]]
    returncodes: list[int]
    ranks: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    env: dict[str, str] = field(default_factory=dict)  # what the launch set (slurm_locally: the SLURM variables)

    @property
    def world_size(self) -> int:
        """Processes that reported."""
        return len(self.ranks)

    def to_dict(self) -> dict[str, Any]:
        """Return the launch as a JSON-serialisable dict (``kind`` = ``"launch"``)."""
        return {"kind": "launch", "commands": self.commands, "returncodes": self.returncodes, "ranks": self.ranks,
                **({"env": self.env} if self.env else {})}


def _failure(output: str, logs: Path, first_rank: int) -> str:
    """The failed rank and the end of its own stderr (torchrun's summary names it as the root cause)."""
    found = re.search(r"Root Cause(?:.|\n)*?local_rank: (\d+)", output)
    local = [int(found.group(1))] if found else range(64)
    code = re.search(r"Root Cause(?:.|\n)*?exitcode\s*: (-?\d+)", output)
    how = ""
    if code:
        how = f" (exit code {code.group(1)}{', killed by a signal' if code.group(1).startswith('-') else ''})"
    for lr in local:
        err = sorted(logs.glob(f"*/attempt_*/{lr}/stderr.log"))
        lines = err[-1].read_text(errors="replace").strip().splitlines() if err else []
        if lines:
            return f"rank {first_rank + lr} failed{how}:\n" + "\n".join(lines[-15:])
    return "\n" + "\n".join(output.strip().splitlines()[-15:])


def torchrun(script: str | Path, *, nproc_per_node: int = 2, nnodes: int = 1, args: Sequence[str] = (),
             env: Mapping[str, str] | None = None, timeout: float = 600.0, stream: bool = True,
             python: str | None = None, rdzv_backend: str = "static") -> Launch:
    """Launch ``script`` under torchrun on this machine and return every rank's results.

    Args:
        script: the training script (a file).
        nproc_per_node: processes per node (per agent).
        nnodes: torchrun agents to start on localhost, meeting at one rendezvous: a
            multi-node job on one machine, to check a launch recipe.
        args: the script's own arguments.
        env: extra environment variables for the processes (``OMP_NUM_THREADS`` defaults to 1).
        timeout: seconds the whole job may take; then every agent is stopped.
        stream: print rank 0's output (node 0's agent) as it comes.
        python: the interpreter (this one by default).
        rdzv_backend: for ``nnodes > 1``: ``"static"`` (default; node 0 hosts the store, every
            agent leaves as soon as its ranks are done) or ``"c10d"`` (elastic; on torch 2.14 an
            agent was seen waiting 300 s at exit for the rendezvous' last-member key).

    Returns:
        The :class:`Launch`: ``ranks`` holds what each rank passed to :func:`report`.

    Raises:
        FileNotFoundError: no such script.
        RuntimeError: an agent failed or timed out (its output's last lines are in the message),
            or a rank reported nothing.
    """
    script = Path(script)
    if not script.is_file():
        raise FileNotFoundError(f"no training script at {script}")
    endpoint = f"127.0.0.1:{free_port()}" if nnodes > 1 else None
    with tempfile.TemporaryDirectory(prefix="course-ranks-") as tmp:
        static = nnodes > 1 and rdzv_backend == "static"
        commands = [torchrun_command(script, nproc_per_node=nproc_per_node, nnodes=nnodes,
                                     node_rank=i if static else None, rdzv_endpoint=endpoint,
                                     rdzv_backend=rdzv_backend,
                                     rdzv_id=f"local-{endpoint.rpartition(':')[2]}" if endpoint else None,
                                     args=args, python=python, log_dir=Path(tmp) / "logs" / f"node{i}")
                    for i in range(nnodes)]
        child_env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
                     "PYTHONUNBUFFERED": "1", **(env or {}), RESULTS_ENV: tmp}
        outputs: list[list[str]] = [[] for _ in commands]
        procs, pumps = [], []
        for i, cmd in enumerate(commands):
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env)
            t = threading.Thread(target=pump, args=(p.stdout, outputs[i], stream and i == 0), daemon=True)
            t.start()
            procs.append(p)
            pumps.append(t)
        try:
            codes = wait_all(procs, timeout)
        finally:  # a timeout, a failed rank or an interrupted cell: no process outlives the call
            for p in procs:
                stop(p)
            for t in pumps:
                t.join(timeout=5)
        text = ["".join(o) for o in outputs]
        if codes is None:
            raise RuntimeError(f"torchrun ran past its {timeout:.0f} s timeout; every agent and rank stopped")
        if any(codes):
            bad = next(i for i, c in enumerate(codes) if c)
            raise RuntimeError(f"torchrun (node {bad}) exited with {codes[bad]}: "
                               + _failure(text[bad], Path(tmp) / "logs" / f"node{bad}", nproc_per_node * bad))
        files = sorted(Path(tmp).glob("rank*.json"), key=lambda p: int(p.stem[4:]))
        ranks = [json.loads(f.read_text()) for f in files]
    expected = nproc_per_node * nnodes
    if len(ranks) != expected:
        raise RuntimeError(f"{len(ranks)} of {expected} ranks reported results: call cu.procs.launch.report(...) "
                           "in every rank of the script")
    return Launch(commands=commands, returncodes=codes, ranks=ranks, output=text[0])

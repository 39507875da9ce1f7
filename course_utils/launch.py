"""Start a training script under ``torchrun`` from a notebook: rank 0's output streamed, every rank's results back.

:func:`torchrun` runs ``python -m torch.distributed.run`` (what the ``torchrun`` command runs) on
this machine: one agent with ``nproc_per_node`` processes, or ``nnodes`` agents on localhost that
meet at one c10d rendezvous, as the nodes of a cluster would. The script is an ordinary file; each
rank calls :func:`report` with what it measured, and the launch returns those dicts in rank order.
Nothing is simulated: the processes, the rendezvous and the collectives are real (gloo on a CPU,
NCCL on GPUs, chosen by the script).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def torchrun_command(script: str | Path, *, nproc_per_node: int = 2, nnodes: int = 1, node_rank: int = 0,
                     rdzv_endpoint: str | None = None, args: Sequence[str] = (), python: str | None = None,
                     rank0_only: bool = True) -> list[str]:
    """The command line of one torchrun agent (what a terminal or a SLURM script would run).

    One node: ``--standalone`` (a local rendezvous on a free port). Several: ``--nnodes``,
    ``--node-rank`` and a c10d rendezvous at ``rdzv_endpoint`` (``host:port``).
    """
    if nproc_per_node < 1 or nnodes < 1:
        raise ValueError(f"nproc_per_node and nnodes must be >= 1, got {nproc_per_node}, {nnodes}")
    if not 0 <= node_rank < nnodes:
        raise ValueError(f"node_rank must be in 0 … {nnodes - 1}, got {node_rank}")
    cmd = [python or sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}"]
    if nnodes == 1 and rdzv_endpoint is None:
        cmd.append("--standalone")
    else:
        if rdzv_endpoint is None:
            raise ValueError("several nodes need rdzv_endpoint='host:port' (the same for every node)")
        cmd += [f"--nnodes={nnodes}", f"--node-rank={node_rank}", "--rdzv-backend=c10d",
                f"--rdzv-endpoint={rdzv_endpoint}", "--rdzv-id=course"]
    if rank0_only:
        cmd.append("--local-ranks-filter=0")
    return [*cmd, str(script), *map(str, args)]


@dataclass
class Launch:
    """What :func:`torchrun` returned: every rank's :func:`report`, in rank order, and the output."""

    commands: list[list[str]]
    returncodes: list[int]
    ranks: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""

    @property
    def world_size(self) -> int:
        """Processes that reported."""
        return len(self.ranks)

    def to_dict(self) -> dict[str, Any]:
        """Return the launch as a JSON-serialisable dict (``kind`` = ``"launch"``)."""
        return {"kind": "launch", "commands": self.commands, "returncodes": self.returncodes, "ranks": self.ranks}


def _pump(stream: Any, sink: list[str], echo: bool) -> None:
    for line in iter(stream.readline, ""):
        sink.append(line)
        if echo:
            print(line, end="", flush=True)
    stream.close()


def torchrun(script: str | Path, *, nproc_per_node: int = 2, nnodes: int = 1, args: Sequence[str] = (),
             env: Mapping[str, str] | None = None, timeout: float = 600.0, stream: bool = True,
             python: str | None = None) -> Launch:
    """Launch ``script`` under torchrun on this machine and return every rank's results.

    Args:
        script: the training script (a file).
        nproc_per_node: processes per node (per agent).
        nnodes: torchrun agents to start on localhost, meeting at one c10d rendezvous: a
            multi-node job on one machine, to check a launch recipe.
        args: the script's own arguments.
        env: extra environment variables for the processes (``OMP_NUM_THREADS`` defaults to 1).
        timeout: seconds the whole job may take; then every agent is stopped.
        stream: print rank 0's output (node 0's agent) as it comes.
        python: the interpreter (this one by default).

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
    commands = [torchrun_command(script, nproc_per_node=nproc_per_node, nnodes=nnodes, node_rank=i,
                                 rdzv_endpoint=endpoint, args=args, python=python) for i in range(nnodes)]
    with tempfile.TemporaryDirectory(prefix="course-ranks-") as tmp:
        child_env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
                     "PYTHONUNBUFFERED": "1", **(env or {}), RESULTS_ENV: tmp}
        outputs: list[list[str]] = [[] for _ in commands]
        procs, pumps = [], []
        for i, cmd in enumerate(commands):
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env)
            t = threading.Thread(target=_pump, args=(p.stdout, outputs[i], stream and i == 0), daemon=True)
            t.start()
            procs.append(p)
            pumps.append(t)
        codes: list[int] = []
        try:
            for p in procs:
                codes.append(p.wait(timeout=timeout))
        except subprocess.TimeoutExpired as e:
            for p in procs:
                p.kill()
            raise RuntimeError(f"torchrun ran past its {timeout:.0f} s timeout; stopped") from e
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for t in pumps:
                t.join(timeout=5)
        text = ["".join(o) for o in outputs]
        if any(codes):
            bad = next(i for i, c in enumerate(codes) if c)
            tail = "\n".join(text[bad].strip().splitlines()[-15:])
            raise RuntimeError(f"torchrun (node {bad}) exited with {codes[bad]}:\n{tail}")
        files = sorted(Path(tmp).glob("rank*.json"), key=lambda p: int(p.stem[4:]))
        ranks = [json.loads(f.read_text()) for f in files]
    expected = nproc_per_node * nnodes
    if len(ranks) != expected:
        raise RuntimeError(f"{len(ranks)} of {expected} ranks reported results: call cu.launch.report(...) "
                           "in every rank of the script")
    return Launch(commands=commands, returncodes=codes, ranks=ranks, output=text[0])

"""A throwaway SLURM cluster on localhost (one node, or several), for tests that submit real jobs.

``local_slurm(folder)`` starts munged, slurmctld and slurmd for one node, ``localhost``, with
everything they write inside ``folder``: a fresh munge key, the munge socket, slurm.conf, the
spool and state folders, logs and pid files. Nothing is written to /etc or /var. The clients
(sbatch, squeue, sinfo, scancel) find the cluster through ``SLURM_CONF``; slurm.conf's
``AuthInfo=socket=...`` tells SLURM's munge plugins (auth and job credentials) where this
munged listens, so the yielded environment is just ``{"SLURM_CONF": ...}``, to merge over
``os.environ`` for the subprocesses that talk to the cluster.

The node has ``cpus`` CPUs (at most those this process may run on), one per array task
(select/cons_tres, CR_CPU), no cgroups (proctrack/linuxproc, task/none), no accounting.
Jobs run as root and inherit the submitting environment (sbatch's default ``--export=ALL``),
PATH and a virtual environment's included. The ports are picked free on 127.0.0.1, so two
test runs on one machine do not clash. Needs root and Debian's ``slurm-wlm`` and ``munge``
(``slurm_available()`` says why not otherwise). ``local_slurm(folder, nodes=2)`` runs two slurmd on
this machine as nodes ``127.0.0.1`` and ``127.0.0.2`` (Debian's build has MULTIPLE_SLURMD), for
multi-node jobs.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel", "scontrol", "srun")
#: What ``local_slurm(nodes>1)`` raises where SLURM lacks MULTIPLE_SLURMD (jobs on 2 nodes would fail: munge replay).
NO_MULTIPLE_SLURMD = "local SLURM: this build runs one slurmd per host (configured without --enable-multiple-slurmd)"
_SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with the NUL; slurmstepd puts sockets in the spool folder


def _program(name: str) -> str | None:
    return shutil.which(name, path=_SEARCH_PATH)


def slurm_available() -> str | None:
    """None when ``local_slurm`` can run here, else one line saying why not."""
    if not sys.platform.startswith("linux"):
        return f"local SLURM needs Linux, not {sys.platform}"
    if os.geteuid() != 0:
        return "local SLURM needs root (slurmd runs the jobs; SlurmUser=root)"
    missing = [name for name in PROGRAMS if _program(name) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (apt-get install slurm-wlm munge)"
    return None


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 1024


def node_names(nodes: int) -> list[str]:
    """The names of ``local_slurm``'s nodes: ``localhost`` alone, or ``127.0.0.1`` … ``127.0.0.<nodes>``.

    Several nodes are named by loopback addresses so that a name a job reads from
    ``$SLURM_JOB_NODELIST`` (a rendezvous host, say) resolves without an entry in /etc/hosts.
    """
    if not 1 <= nodes <= 254:
        raise ValueError(f"local SLURM: nodes must be in 1 … 254, got {nodes}")
    return ["localhost"] if nodes == 1 else [f"127.0.0.{k}" for k in range(1, nodes + 1)]


def _hostlist(nodes: int) -> str:
    return "localhost" if nodes == 1 else f"127.0.0.[1-{nodes}]"


def _slurm_conf(folder: Path, name: str, cpus: int, ports: list[int], min_job_age: int, nodes: int = 1) -> str:
    # several slurmd on one host (MULTIPLE_SLURMD, in Debian's build): each with its own Port (ports[2:]), spool
    # folder, pid and log file (%n: the node's name)
    per, sub, memory = ("", "", _memory_mb() // 2) if nodes == 1 else ("-%n", "/%n", _memory_mb() // 2 // nodes)
    node_lines = (f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN\n"
                  if nodes == 1 else
                  "".join(f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs={cpus} "
                          f"RealMemory={memory} State=UNKNOWN\n" for n, port in zip(node_names(nodes), ports[2:])))
    return f"""\
ClusterName={name}
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder / "munge" / "munge.socket"}
StateSaveLocation={folder / "state"}
SlurmdSpoolDir={folder / "spool"}{sub}
SlurmctldPidFile={folder / "slurmctld.pid"}
SlurmdPidFile={folder}/slurmd{per}.pid
SlurmctldLogFile={folder / "slurmctld.log"}
SlurmdLogFile={folder}/slurmd{per}.log
PlugStackConfig={folder / "plugstack.conf"}
SlurmctldDebug=info
SlurmdDebug=info
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge={min_job_age}
KillWait=2
{node_lines}PartitionName=debug Nodes={_hostlist(nodes)} Default=YES MaxTime=INFINITE State=UP
"""


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that started it dies (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def _start(argv: list[str], folder: Path, name: str, env: dict[str, str]) -> subprocess.Popen:
    with open(folder / f"{name}.out", "ab") as out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=folder, start_new_session=True, preexec_fn=_die_with_parent)


def _logs(folder: Path, lines: int = 20) -> str:
    """The last lines of each daemon's log file, or of its stdout and stderr where it wrote no log file."""
    tails = []
    slurmds = sorted({p.stem for p in folder.glob("slurmd-*.*")}) or ["slurmd"]
    for name in ("munged", "slurmctld", *slurmds):
        log = next((p for p in (folder / f"{name}.log", folder / f"{name}.out") if p.exists()), None)
        if log is not None:
            tails.append("\n".join([f"--- {log.name} ---", *log.read_text(errors="replace").splitlines()[-lines:]]))
    return "\n".join(tails)


class _DaemonDied(RuntimeError):
    pass


def _wait_until(done: Callable[[], bool], what: str, folder: Path, procs: dict[str, subprocess.Popen],
                timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        dead = {name: p.returncode for name, p in procs.items() if p.poll() is not None}
        if dead:
            raise _DaemonDied(f"local SLURM: {dead} exited while waiting for {what}\n{_logs(folder)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"local SLURM: no {what} after {timeout:.0f} s\n{_logs(folder)}")
        time.sleep(0.2)


def _client(args: list[str], env: dict[str, str], timeout: float = 10) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _nodes_idle(env: dict[str, str], nodes: int) -> bool:
    try:
        result = _client(["sinfo", "--noheader", "--Node", f"--nodes={_hostlist(nodes)}", "--format=%T"], env,
                         timeout=5)
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0 and result.stdout.split() == ["idle"] * nodes


def _cancel_jobs(env: dict[str, str], spool: Path, timeout: float = 15) -> None:
    """Cancel the jobs left and wait for their slurmstepd to end (each has a socket in a node's spool folder)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        ids = _client(["squeue", "--noheader", "--format=%A"], env).stdout.split()
        if ids:
            _client(["scancel", "--quiet", *ids], env)
    deadline = time.monotonic() + timeout
    while any(p.is_socket() for p in spool.rglob("*")) and time.monotonic() < deadline:
        time.sleep(0.1)


def _kill_strays(conf: Path) -> None:
    """SIGKILL any slurmstepd of this cluster still alive (one started with this SLURM_CONF)."""
    mark = f"SLURM_CONF={conf}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "cmdline").read_bytes().startswith(b"slurmstepd") and \
                    mark in (proc / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _stop(proc: subprocess.Popen, grace: float = 5) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def _munge_key(path: Path) -> None:
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, "wb") as out:
        out.write(os.urandom(1024))


@contextlib.contextmanager
def local_slurm(folder: Path, cpus: int = 2, timeout: float = 60, min_job_age: int = 300,
                nodes: int = 1) -> Iterator[dict[str, str]]:
    """Run munged, slurmctld and slurmd for node ``localhost`` (partition ``debug``) inside ``folder``.

    Yields the environment variables the SLURM clients need (``{"SLURM_CONF": ...}``) once ``sinfo``
    shows the node idle; raises RuntimeError, with the daemons' log tails, when that takes over
    ``timeout`` seconds or a daemon dies. ``cpus`` (per node) is capped at the CPUs this process may use.
    ``nodes`` > 1: that many nodes, ``node_names(nodes)`` (127.0.0.1, 127.0.0.2, …), one slurmd each
    (``slurmd -N name``, its own port; logs ``slurmd-<name>.log``), all on this machine and sharing its
    CPUs, so that a multi-node job (``sbatch --nodes=2``, ``srun`` in it) runs as written; RuntimeError
    ``NO_MULTIPLE_SLURMD`` where this SLURM cannot run several slurmd on one host.
    ``min_job_age`` is slurm.conf's MinJobAge, seconds a finished job's record is kept (SLURM's
    default, 300, unless told; at least 2). ``sbatch --wait`` returns the highest exit code among
    the array's task records it finds; it polls 2 s after submitting, then waits 8 s, then 32 s,
    growing its wait only while that is under MinJobAge / 2. So ``min_job_age=4`` keeps it polling
    every 2 s (a quick array takes ~4 s, not ~10 s), but drops each finished task's record 4 to 14 s
    after it ended: a task that failed early in a longer array is then missed and sbatch returns 0.
    On exit, even when the body raised, it cancels the jobs left, stops the daemons
    (SIGTERM, SIGKILL after 5 s) and waits for them.
    """
    why = slurm_available()
    if why:
        raise RuntimeError(why)
    folder = Path(folder).resolve()
    names = node_names(nodes)
    spools = [folder / "spool"] if nodes == 1 else [folder / "spool" / n for n in names]
    if len(str(spools[-1] / f"{names[-1]}_9999999.4294967294")) > _SOCKET_PATH_MAX:  # job 9999999, step batch
        raise ValueError(f"local SLURM: folder path too long for unix sockets: {folder}")
    munge, spool, conf = folder / "munge", folder / "spool", folder / "slurm.conf"
    for sub in (munge, *spools, folder / "state"):
        sub.mkdir(parents=True, exist_ok=True, mode=0o755)
    _munge_key(munge / "munge.key")
    (folder / "plugstack.conf").write_text("")
    cpus = max(1, min(cpus, len(os.sched_getaffinity(0))))
    slurm_env = {"SLURM_CONF": str(conf)}
    env = {**os.environ, **slurm_env}
    procs: dict[str, subprocess.Popen] = {}
    slurmds = {"slurmd": "localhost"} if nodes == 1 else {f"slurmd-{n}": n for n in names}  # log name: node
    try:
        procs["munged"] = _start([_program("munged"), "--foreground", "--force", f"--socket={munge / 'munge.socket'}",
                                  f"--key-file={munge / 'munge.key'}", f"--pid-file={munge / 'munged.pid'}",
                                  f"--log-file={folder / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}"],
                                 folder, "munged", env)
        _wait_until((munge / "munge.socket").is_socket, "munge socket", folder, procs, timeout)
        cluster = f"local{os.getpid()}x{time.time_ns() % 10**6}"  # a name of its own for each run
        for attempt in range(3):  # the free ports picked may be taken before slurmctld or slurmd binds them
            ports = _free_ports(2 if nodes == 1 else 2 + nodes)
            conf.write_text(_slurm_conf(folder, cluster, cpus, ports, min_job_age, nodes))
            procs["slurmctld"] = _start([_program("slurmctld"), "-D", "-c", "-f", str(conf)], folder, "slurmctld", env)
            for log, node in slurmds.items():
                procs[log] = _start([_program("slurmd"), "-D", "-N", node, "-f", str(conf)], folder, log, env)
            try:
                _wait_until(lambda: _nodes_idle(env, nodes), "idle nodes in sinfo", folder, procs, timeout)
                break
            except _DaemonDied as died:
                if attempt == 2 or "Address already in use" not in str(died):
                    raise
                for name in (*slurmds, "slurmctld"):
                    _stop(procs.pop(name))
        if nodes > 1 and "MULTIPLE_SLURMD" not in _client(["scontrol", "show", "config"], env).stdout:
            raise RuntimeError(NO_MULTIPLE_SLURMD)
        yield slurm_env
    finally:
        if "slurmctld" in procs and procs["slurmctld"].poll() is None:
            _cancel_jobs(env, spool)
        for name in (*slurmds, "slurmctld", "munged"):
            if name in procs:
                _stop(procs[name])
        _kill_strays(conf)

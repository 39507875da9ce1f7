"""The ``course-sandbox`` kernel's command: start ipykernel in bubblewrap (tools/sandbox.py) for one submission.

nbgrader starts it as ``python tools/sandbox_kernel.py CONNECTION_FILE [ARGS]`` with the cwd set to
the submission's folder (``.../<student>/<assignment>``). It reads the grading worker's settings
(``COURSE_SANDBOX_*``), writes the sandbox's private files outside anything the sandbox can
write, empties the socket folder (nothing a previous kernel left there is trusted), applies the
limits, leaves a watcher behind and replaces itself with bubblewrap.

The watcher guards the one host folder the sandbox may write, the socket folder: once the
kernel's sockets exist it makes the folder unwritable (when grading as root), and it kills the
sandbox if anything in the folder grows past a few megabytes (the sandbox's scratch space is a
size-limited tmpfs; this folder is on the host's disk).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.sandbox import SANDBOX, UID_BASE, WHY_NOT, Limits, bwrap_argv, find, kernel_env, python  # noqa: E402

IPC_BYTES = 4 * 1024 ** 2  # more than this in the socket folder: the sandbox is killed
PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


def own_processes() -> int:
    """How many processes and threads this user runs now (RLIMIT_NPROC counts them all)."""
    me, count = os.getuid(), 0
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == me:
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


def processes_of(uid: int) -> list[int]:
    """PIDs of the processes this uid runs (zombies included: RLIMIT_NPROC counts them)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                found.append(int(pid))
        except OSError:
            continue
    return found


def reap(uid: int, timeout: float = 30.0) -> None:
    """Kill what a previous sandbox of this slot left running (a fork bomb's last processes) and wait.

    Its processes would count against this kernel's RLIMIT_NPROC, and it could not start a thread.
    """
    deadline = time.monotonic() + timeout
    while (pids := processes_of(uid)) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def set_limits(limits: Limits, uid: int | None) -> None:
    """Apply the limits to this process (bubblewrap and the kernel inherit them)."""
    nproc = limits.processes if uid is not None else own_processes() + limits.processes
    for name, value in ((resource.RLIMIT_DATA, limits.memory), (resource.RLIMIT_CPU, limits.cpu_seconds),
                        (resource.RLIMIT_NPROC, nproc), (resource.RLIMIT_FSIZE, limits.disk),
                        (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(name, (value, value))


def write_private(folder: Path, info: dict, uid: int) -> None:
    """The connection file as the sandbox sees it (sockets under /ipc), and its passwd, group, hosts."""
    (folder / "kernel.json").write_text(json.dumps({**info, "ip": f"/ipc/{Path(info['ip']).name}"}))
    (folder / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                   f"student:x:{uid}:{uid}:student:{SANDBOX}/home:/bin/sh\n")
    (folder / "group").write_text(f"root:x:0:\nstudent:x:{uid}:\n")
    (folder / "hosts").write_text("127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost sandbox\n"
                                  "::ffff:127.0.0.1 localhost\n")  # its hostname; torch.distributed looks up both
    for path in [folder, *folder.iterdir()]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def empty(folder: Path) -> None:
    """Remove everything in ``folder`` without following links."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def _size(folder: Path) -> int:
    total = 0
    for entry in os.scandir(folder):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        total += st.st_size if stat.S_ISREG(st.st_mode) else 4096
    return total


def watch(sandbox_pid: int, ipc_dir: Path, sockets: list[str], lock: bool) -> None:
    """Until the sandbox ends: lock the socket folder once its sockets exist; kill the sandbox if it fills it."""
    locked = not lock
    while True:
        try:
            os.kill(sandbox_pid, 0)
        except ProcessLookupError:
            return
        if not locked and all((ipc_dir / name).exists() for name in sockets):
            os.chown(ipc_dir, 0, 0)
            os.chmod(ipc_dir, 0o755)
            locked = True
        if _size(ipc_dir) > IPC_BYTES:
            os.kill(sandbox_pid, signal.SIGKILL)
            empty(ipc_dir)
            return
        time.sleep(0.02 if not locked else 0.5)


def spawn_watcher(ipc_dir: Path, sockets: list[str], lock: bool) -> None:
    """Leave :func:`watch` running in a detached grandchild; this process goes on to become bubblewrap."""
    me = os.getpid()
    child = os.fork()
    if child == 0:
        if os.fork() == 0:
            os.setsid()
            try:
                watch(me, ipc_dir, sockets, lock)
            finally:
                os._exit(0)
        os._exit(0)
    os.waitpid(child, 0)


def main(argv: list[str]) -> None:
    """Start the sandboxed kernel for ``argv = [CONNECTION_FILE, *extra kernel arguments]``."""
    bwrap = find()
    if bwrap is None or not argv:
        sys.exit(f"course-sandbox kernel: {WHY_NOT}" if bwrap is None else "usage: sandbox_kernel.py CONNECTION_FILE")
    cwd = Path.cwd()
    student, assignment = cwd.parent.name, cwd.name
    submitted = Path(os.environ.get("COURSE_SANDBOX_SUBMITTED", cwd.parents[1])) / student / assignment
    limits = Limits.from_env()
    uid = UID_BASE + int(os.environ.get("COURSE_SANDBOX_SLOT", "0")) if os.geteuid() == 0 else None
    cpus = [int(c) for c in os.environ.get("COURSE_SANDBOX_CPUS", "").split(",") if c.strip()]
    cpus = cpus or sorted(os.sched_getaffinity(0))
    info = json.loads(Path(argv[0]).read_text())
    if info.get("transport") != "ipc":
        sys.exit("course-sandbox kernel: the kernel must talk over ipc:// (KernelManager.transport=ipc)")
    ipc_dir = Path(info["ip"]).parent
    private = Path(tempfile.mkdtemp(prefix="kernel-", dir=ipc_dir.parent))  # not visible to any sandbox
    write_private(private, info, uid if uid is not None else os.getuid())
    empty(ipc_dir)
    if uid is not None:
        reap(uid)
        os.chown(ipc_dir, uid, uid)
    sockets = [f"{Path(info['ip']).name}-{info[port]}" for port in PORTS]
    command = [python(), "-m", "ipykernel_launcher", "-f", "/kernel.json", *argv[1:]]
    args = bwrap_argv(bwrap, submission=submitted, workdir=f"{SANDBOX}/{assignment}", ipc_dir=ipc_dir,
                      private=private, limits=limits, uid=uid, command=command)
    env = kernel_env(limits, cpus)
    os.sched_setaffinity(0, cpus)
    spawn_watcher(ipc_dir, sockets, lock=uid is not None)
    set_limits(limits, uid)
    os.execve(bwrap, args, env)


if __name__ == "__main__":
    main(sys.argv[1:])

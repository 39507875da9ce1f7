"""Each submission's kernel in a bubblewrap sandbox: what `make autograde` runs student code in.

nbgrader executes a submission by starting a Jupyter kernel and sending it the notebook's cells,
with the hidden tests put back. Here that kernel is started through the kernel spec
``course-sandbox`` (:func:`write_kernelspec`), whose command is tools/sandbox_kernel.py. It
starts ipykernel inside `bubblewrap <https://github.com/containers/bubblewrap>`_
(Debian's ``bubblewrap``), which sees:

* read-only: the system (``/usr``), the Python environment, ``course_utils`` and the datasets;
* writable: a size-limited tmpfs, ``/sandbox``, holding the submission's folder as the student
  handed it in (its files read-only, new files allowed), a home, ``$TMPDIR`` and the lessons'
  results; and smaller ones at ``/tmp`` and ``/dev/shm``;
* nothing else: no ``solutions/``, no gradebook, no other student's files, no ``results/``, no
  network (a network namespace with only loopback: the kernel talks to nbgrader over ``ipc://``
  socket files), no other process (a PID namespace), and, when run as root, a user of its own
  (uid 60000 + slot) without capabilities;

and runs under limits on memory (``RLIMIT_DATA``), CPU time, processes (``RLIMIT_NPROC``, which
needs that uid of its own) and disk (the tmpfs sizes; ``RLIMIT_FSIZE``), pinned to the CPUs of its
grading slot. The limits are set by ``COURSE_SANDBOX_*`` variables (:class:`Limits`).

``python tools/sandbox.py check`` says whether a sandbox can be made here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

KERNEL_NAME = "course-sandbox"
UID_BASE = 60000  # sandbox users when grading as root: UID_BASE + slot, no entry in /etc/passwd needed
SANDBOX = "/sandbox"  # the main writable tmpfs inside
COURSE_ROOT = Path(__file__).resolve().parents[1]
WHY_NOT = ("no sandbox for student code: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), "
           "or say UNSAFE=1 to run submissions with your own rights")
GIB = 1024 ** 3


def python() -> str:
    """This Python as the sandbox knows it: its folder resolved (a linked .venv is bound where it really is)."""
    exe = Path(sys.executable)
    return str(exe.parent.resolve() / exe.name)


def _size(text: str) -> int:
    """Bytes from '2G', '512M', '100k' or a plain number."""
    text = text.strip().upper().removesuffix("B")
    scale = {"K": 1024, "M": 1024 ** 2, "G": GIB, "T": 1024 ** 4}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


@dataclass(frozen=True)
class Limits:
    """What one submission's kernel may use (each process of it, for memory and CPU time)."""

    memory: int = 6 * GIB     # RLIMIT_DATA: heap and private writable mappings, per process
    cpu_seconds: int = 1800   # RLIMIT_CPU, per process
    processes: int = 512      # RLIMIT_NPROC: processes and threads of the sandbox's user
    disk: int = 2 * GIB       # size of /sandbox (RAM-backed) and of any one file; /tmp and /dev/shm get a quarter

    @classmethod
    def from_env(cls) -> Limits:
        """Limits from ``COURSE_SANDBOX_MEMORY`` / ``_CPU_SECONDS`` / ``_PROCESSES`` / ``_DISK``."""
        env, default = os.environ, cls()
        return cls(memory=_size(env.get("COURSE_SANDBOX_MEMORY", str(default.memory))),
                   cpu_seconds=int(env.get("COURSE_SANDBOX_CPU_SECONDS", default.cpu_seconds)),
                   processes=int(env.get("COURSE_SANDBOX_PROCESSES", default.processes)),
                   disk=_size(env.get("COURSE_SANDBOX_DISK", str(default.disk))))


@lru_cache(maxsize=1)
def find() -> str | None:
    """Path of a bubblewrap that can make a sandbox here (tried once), or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    probe = [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--proc", "/proc",
             "--dev", "/dev", "--die-with-parent", "true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return bwrap if ok else None


def write_kernelspec(folder: Path) -> Path:
    """Write ``folder/kernels/course-sandbox/kernel.json`` (put ``folder`` on ``JUPYTER_PATH``)."""
    spec = folder / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve().with_name("sandbox_kernel.py")), "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({
        # interrupts go as messages: a signal would reach bubblewrap, which does not pass it on
        "argv": argv, "display_name": "Python 3 (course sandbox)", "language": "python", "interrupt_mode": "message",
        "metadata": {"debugger": False}}, indent=1))
    return spec


# --- what the sandbox sees -------------------------------------------------------------------

def _system_binds() -> list[str]:
    """The system, read-only: /usr, the merged-/usr links, and the few /etc files programs read."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "alternatives",
                 "nsswitch.conf", "mime.types"):
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


def python_paths() -> list[Path]:
    """Folders the kernel's Python needs: its prefixes, its site-packages and course_utils.

    Never the course folder itself (it holds ``solutions/`` and the gradebook) nor a folder above it.
    """
    paths = sysconfig.get_paths()
    keep = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, paths["stdlib"], paths["platstdlib"],
                                        paths["purelib"], paths["platlib"])}
    for finder in sys.meta_path:  # every finder's answer: the kernel's sys.path differs from this one's
        try:
            spec = finder.find_spec("course_utils", None)
        except (AttributeError, ImportError, TypeError, ValueError):
            continue
        if spec and spec.submodule_search_locations:
            keep |= {Path(p).resolve() for p in spec.submodule_search_locations}
    course = COURSE_ROOT.resolve()
    keep = {p for p in keep if p.is_dir() and not course.is_relative_to(p)}
    return sorted(p for p in keep if not any(p != k and p.is_relative_to(k) for k in keep))


def data_dirs() -> list[Path]:
    """Dataset folders to show read-only: ``$COURSE_DATA`` and the default cache, where present."""
    found = [Path(os.environ["COURSE_DATA"])] if os.environ.get("COURSE_DATA") else []
    found.append(Path.home() / ".cache" / "course_data")
    return [p.resolve() for p in found if p.is_dir()]


def kernel_env(limits: Limits, cpus: list[int]) -> dict[str, str]:
    """The kernel's environment: the course's settings, no instructor secrets, paths inside."""
    keep = {k: v for k, v in os.environ.items()
            if (k.startswith(("COURSE_", "NBGRADER_", "LC_", "PYTHON")) or k in {"LANG", "TZ", "MPLBACKEND"})
            and not k.startswith("COURSE_SANDBOX") and k != "PYTHONPATH"}
    keep.update({k: os.environ[k] for k in ("MKL_NUM_THREADS",) if k in os.environ})  # set, it beats OMP_NUM_THREADS
    threads = str(max(1, len(cpus)))
    return {**keep, "PATH": f"{Path(python()).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": f"{SANDBOX}/home", "USER": "student", "LOGNAME": "student", "TMPDIR": f"{SANDBOX}/tmp",
            "COURSE_DATA": f"{SANDBOX}/data", "COURSE_RESULTS_DIR": f"{SANDBOX}/results",
            "JUPYTER_RUNTIME_DIR": f"{SANDBOX}/runtime", "MPLCONFIGDIR": f"{SANDBOX}/home/.config/matplotlib",
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", threads)}


def _ro(source: Path | str, dest: str, made: set[str]) -> list[str]:
    """``--ro-bind source dest``, its missing parents first made world-readable (bubblewrap makes them 0700)."""
    args: list[str] = []
    for parent in reversed(Path(dest).parents):
        name = str(parent)
        if name not in made and name != "/":
            made.add(name)
            args += ["--perms", "0755", "--dir", name]
    return [*args, "--ro-bind", str(source), dest]


def bwrap_argv(bwrap: str, *, submission: Path, workdir: str, ipc_dir: Path, private: Path,
               limits: Limits, uid: int | None, command: list[str]) -> list[str]:
    """The bubblewrap command line that runs ``command`` in a sandbox (see the module docstring).

    ``private`` holds ``kernel.json`` (the connection info, shown read-only at /kernel.json) and the
    sandbox's ``passwd``, ``group`` and ``hosts``; ``ipc_dir`` (the kernel's sockets) is /ipc.
    """
    etc_dir = private
    home = f"{SANDBOX}/home"
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox", "--proc", "/proc", "--dev", "/dev",
            "--perms", "0755", "--dir", "/etc", *_system_binds(),
            "--ro-bind", str(etc_dir / "passwd"), "/etc/passwd", "--ro-bind", str(etc_dir / "group"), "/etc/group",
            "--ro-bind", str(etc_dir / "hosts"), "/etc/hosts",
            "--perms", "1777", "--size", str(limits.disk), "--tmpfs", SANDBOX,
            # /tmp and /dev/shm: tmpfs of their own (a course folder may live under /tmp: its .venv is bound there)
            "--perms", "1777", "--size", str(limits.disk // 4), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(limits.disk // 4), "--tmpfs", "/dev/shm"]
    for sub in ("home", "tmp", "data", "results", "runtime", "home/.config"):
        args += ["--perms", "1777", "--dir", f"{SANDBOX}/{sub}"]
    made = {SANDBOX, f"{SANDBOX}/home", "/etc", "/usr"}
    for path in python_paths():
        args += _ro(path, str(path), made)
    for path in data_dirs()[:1]:  # what `make data` prepared, where course_utils looks for it
        args += _ro(path, f"{home}/.cache/course_data", made)
    mpl = Path.home() / ".cache" / "matplotlib"
    if mpl.is_dir():
        args += _ro(mpl, f"{home}/.cache/matplotlib", made)
    args += ["--perms", "1777", "--dir", workdir]
    for item in sorted(submission.iterdir()) if submission.is_dir() else []:
        args += ["--ro-bind", str(item), f"{workdir}/{item.name}"]
    args += ["--ro-bind", str(private / "kernel.json"), "/kernel.json", "--bind", str(ipc_dir), "/ipc",
             "--chdir", workdir]
    if uid is not None:  # root: a user of its own, no capabilities left (RLIMIT_NPROC then counts)
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "/usr/bin/setpriv",
                 f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                 "--"]
    return args + command


def main(argv: list[str]) -> int:
    """``check``: whether a sandbox can be made here."""
    if argv[:1] == ["check"]:
        found = find()
        print(f"sandbox: {found}" if found else WHY_NOT)
        return 0 if found else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`make reference`: run every lesson in the gpu profile and keep the results as the course's reference.

Runs with any Python that has torch >= 2.5 (`PY=python3 make reference` on a GPU box that keeps its
own torch). In order:

1. **The notebook executor.** nbclient, nbformat, jupyter_client and ipykernel are imported from
   this Python when it has them; else pip installs only the missing ones (pip's own resolver,
   ``--dry-run --report``, decides which) into ``build/kernel-site/pyXY/``, which this run and its
   kernels put first on their path. The wheels come from ``wheelhouse/`` (``make wheelhouse``)
   with ``pip --no-index --find-links wheelhouse``; the registry is asked only when there is no
   wheelhouse and ``COURSE_OFFLINE`` is unset. Nothing here runs ``apt-get``.
2. **The data.** Fashion-MNIST from ``$COURSE_DATA`` (a path relative to the checkout is taken
   from the checkout): a folder holding the four original ``.gz`` files (unzipped into
   ``build/data/``), or a data folder in torchvision's layout; else Debian's folder or
   ``~/.cache/course_data``; else torchvision's download unless ``COURSE_OFFLINE=1``. Without it
   (or with ``COURSE_DATASET=digits``) a gpu run is refused: a reference is never saved on the
   digits fallback, and a lesson whose output shows the fallback is not saved either.
3. **The lessons**, each in a child process with a watchdog that kills it, kernel included, at its
   limit (``--lesson-timeout``, and no later than ``--budget`` seconds after the start). The
   child writes the executed notebook after every cell, so a killed lesson keeps every cell that
   finished. Each lesson saves into a staging folder; when it ends, its results and executed
   notebook move into ``<out>/<machine-id>/`` (a failed, killed or fallback lesson's into
   ``<out>/<machine-id>/failed/``, so it never replaces a good reference).
4. **The record.** ``environment.json`` (environment record, ``nvidia-smi``, the torch stack's
   packages, the git commit, the code digest, how the executor was installed) is written before the
   first lesson and rewritten after each, with each lesson's wall time; ``--archive`` rewrites one
   ``.tar.gz`` of the machine's folder after each lesson too (tools/gpu_window.sh brings that back).
   Without ``.git`` (a device's copy of the checkout) the commit comes from ``COURSE_GIT_COMMIT``.
5. **Resuming.** A lesson already saved for this machine by a run of the same code (same code digest,
   tools/reference_state.py) in ``--resume-from`` (default: ``--out``) is not run again: its files are
   kept (copied into ``--out`` when that differs) and listed as resumed. ``--no-resume`` runs every lesson.
   ``--budget S``: every lesson ends within S seconds of the start; a lesson whose estimate
   (tools/estimate_gpu.py) does not fit what is left is skipped, and a smaller one after it may still run.

Target: 9 min in all on an H100/H200 (tools/estimate_gpu.py). Without a CUDA GPU, the gpu profile says
so and exits 0.
``--profile smoke`` (or ``cpu``) runs the same plumbing on a CPU for testing, into the folders
given by ``--out`` and ``--build``; it never writes into results/reference/.

    python tools/make_reference.py                                    # what `make reference` runs
    python tools/make_reference.py --profile smoke --lessons 00 --out /tmp/ref --build /tmp/b
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout, for `tools` and `course_utils`

from tools import reference_state  # noqa: E402
from tools.run_notebooks import run_notebook, select_lessons  # noqa: E402  (the lower of the two tools)

REFERENCE = ROOT / "results" / "reference"
WHEELHOUSE = ROOT / "wheelhouse"
KERNEL_SITE = ROOT / "build" / "kernel-site"
DATA_BUILD = ROOT / "build" / "data"
#: The notebook executor: what `make reference` needs beyond torch and the lessons' own dependencies.
KERNEL_MODULES = ("nbclient", "nbformat", "jupyter_client", "ipykernel")
#: Distributions to ask pip for (tqdm: pure Python, a lesson dependency a GPU image may lack).
KERNEL_REQUIREMENTS = ("nbclient", "nbformat", "jupyter_client", "ipykernel", "tqdm")
#: What the lessons import that is binary (not in the wheelhouse): the machine must have these.
LESSON_MODULES = ("numpy", "torchvision", "matplotlib", "sklearn", "PIL")
#: The packages whose versions decide a GPU measurement (what ``pip freeze`` would list of them).
STACK = re.compile(r"^(torch|torchvision|torchaudio|triton|numpy|nvidia-.*|cuda-.*|pytorch-.*)$")
#: What course_utils.data.datasets prints when it falls back to digits (a reference never keeps that lesson).
FALLBACK_MARK = "using the offline default dataset 'digits' instead"
GRACE_S = 1.0  # after SIGTERM, before SIGKILL (the child's notebook is already on disk)
MIN_LESSON_S = 15  # a lesson is not started with less than this left before --budget ends
#: course_utils.env.PROFILES (a test keeps them equal): named here so that the child imports no torch.
PROFILES = ("smoke", "cpu", "gpu")
#: The child that executes one lesson (``--run-one``); the tests put a kernel-free stand-in here.
CHILD = [sys.executable, str(Path(__file__).resolve())]

Runner = Callable[..., subprocess.CompletedProcess]


class SetupError(RuntimeError):
    """The run cannot start here (message says why and what to do)."""


def offline() -> bool:
    """Whether ``COURSE_OFFLINE`` forbids the network (set and not 0)."""
    return os.environ.get("COURSE_OFFLINE", "").strip() not in ("", "0")


# --- the watchdog --------------------------------------------------------------------------------------------------

def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc; empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def run_with_limit(cmd: list[str], limit: float, env: dict[str, str] | None = None,
                   stdout: object = None) -> tuple[int | None, float]:
    """Run ``cmd``; at ``limit`` seconds kill it and everything it started (a Jupyter kernel runs in
    a session of its own, so a process-group kill would miss it). Return (exit code or None, seconds).

    The tree is read while the child still runs (an orphaned kernel would leave it), sent SIGTERM,
    and after :data:`GRACE_S` SIGKILL, whatever is left.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.STDOUT if stdout else None)
    try:
        return proc.wait(timeout=max(limit, 0.0)), time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        tree = [*reversed(_descendants(proc.pid)), proc.pid]
        _signal(tree, signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        _signal([*reversed(_descendants(proc.pid)), *tree], signal.SIGKILL)
        proc.wait()
        return None, time.perf_counter() - t0


def run_one(src: Path, build: Path, limit: int, result: Path) -> int:
    """Child process: execute one notebook (written after every cell) and write (ok, seconds, error) as JSON."""
    ok, seconds, error = run_notebook(src, build, timeout=limit, progressive=True)
    result.write_text(json.dumps({"ok": ok, "seconds": seconds, "error": error}))
    return 0


# --- the notebook executor -----------------------------------------------------------------------------------------

def missing_modules(names: Sequence[str]) -> list[str]:
    """The names among ``names`` that this Python cannot import (looked up, not imported)."""
    importlib.invalidate_caches()
    out = []
    for name in names:
        try:
            if importlib.util.find_spec(name) is None:
                out.append(name)
        except (ImportError, ValueError):
            out.append(name)
    return out


def _prepend_path(folder: Path) -> None:
    """Put ``folder`` first on this process's path and on its children's (PYTHONPATH)."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(folder)]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(folder), *parts])


def pip_environment(no_registry: bool) -> dict[str, str]:
    """The environment pip runs in: without a registry, no pip configuration at all (no index or
    find-links from a config file or PIP_* variable can point pip at the network)."""
    env = dict(os.environ)
    if no_registry:
        env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
        env["PIP_CONFIG_FILE"] = os.devnull  # pip then reads no configuration file
        env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def install_plan(pip: list[str], source: list[str], env: dict[str, str], run: Runner) -> list[str] | None:
    """``name==version`` of what pip would install for the executor, given what this Python has
    (None: this pip cannot say, older than 22.2)."""
    with tempfile.TemporaryDirectory(prefix="kernel-plan-") as tmp:
        report = Path(tmp) / "report.json"
        done = run([*pip, "install", "--quiet", "--dry-run", "--report", str(report),
                    *source, *KERNEL_REQUIREMENTS], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            if "no such option" in (done.stderr or "") or "unrecognized" in (done.stderr or ""):
                return None
            where = " ".join(source) or "the registry"
            raise SetupError(f"pip could not plan the notebook executor's install from {where}:\n"
                             f"{(done.stderr or done.stdout or '').strip()[-2000:]}")
        items = json.loads(report.read_text()).get("install", [])
    return [f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items]


def _has_distribution(name: str) -> bool:
    """Whether package ``name`` is installed for this Python, found without importing or finding it."""
    import importlib.metadata

    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def ensure_kernel(*, wheelhouse: Path = WHEELHOUSE, site: Path = KERNEL_SITE, no_registry: bool | None = None,
                  run: Runner = subprocess.run) -> dict:
    """Make the notebook executor importable here and in the kernels this run starts.

    Returns what was done: ``{"how": "present" | "cached" | "installed", "from": ..., "packages": [...],
    "site": ...}``. Raises :class:`SetupError` when it cannot be had (offline without wheels, no pip,
    an install that still leaves a module missing).
    """
    if not missing_modules(KERNEL_MODULES):
        return {"how": "present", "packages": [], "site": None}
    no_registry = offline() if no_registry is None else no_registry
    target = site / f"py{sys.version_info.major}{sys.version_info.minor}"
    if target.is_dir():
        _prepend_path(target)
        if not missing_modules(KERNEL_MODULES):
            return {"how": "cached", "packages": [], "site": str(target)}
    wheels = sorted(wheelhouse.glob("*.whl")) if wheelhouse.is_dir() else []
    if wheels:
        source = ["--no-index", "--find-links", str(wheelhouse)]
    elif no_registry:
        raise SetupError(
            f"this Python ({sys.executable}) lacks {', '.join(missing_modules(KERNEL_MODULES))}, COURSE_OFFLINE is set "
            f"and {wheelhouse} holds no wheels: run `make wheelhouse` where the registry is reachable and bring "
            "wheelhouse/ along (tools/gpu_window.sh says how), or install them yourself")
    else:
        source = []  # the registry, as this machine's pip is configured
    # not importlib.util.find_spec("pip"): setuptools' distutils hack answers that lookup by putting the
    # standard library's distutils back for the rest of the process (torch.utils.cpp_extension then fails)
    if not _has_distribution("pip"):
        raise SetupError(f"this Python ({sys.executable}) has no pip to install the notebook executor with")
    pip = [sys.executable, "-m", "pip"]
    env = pip_environment(no_registry or bool(wheels))
    plan = install_plan(pip, source, env, run)
    # pip's plan, exactly (no deps beyond it); a pip too old to plan installs the whole stack into the target
    items, deps = (plan, ["--no-deps"]) if plan is not None else (list(KERNEL_REQUIREMENTS), [])
    print(f"installing the notebook executor for {sys.executable} into {target}: {', '.join(items) or 'nothing'} "
          f"({'from ' + str(wheelhouse) if wheels else 'from the registry'})", flush=True)
    target.mkdir(parents=True, exist_ok=True)
    if items:
        done = run([*pip, "install", "--quiet", "--no-compile", "--ignore-requires-python", "--upgrade", *deps,
                    "--target", str(target), *source, *items], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SetupError(f"pip could not install the notebook executor into {target}:\n"
                             f"{(done.stderr or done.stdout or '').strip()[-2000:]}")
    _prepend_path(target)
    still = missing_modules(KERNEL_MODULES)
    if still:
        raise SetupError(f"after installing into {target}, {', '.join(still)} still cannot be imported")
    return {"how": "installed", "from": str(wheelhouse) if wheels else "registry", "packages": items,
            "site": str(target)}


# --- the data ------------------------------------------------------------------------------------------------------

def data_folder() -> Path:
    """``$COURSE_DATA`` (relative: to the checkout), else the default cache."""
    given = os.environ.get("COURSE_DATA", "").strip()
    if given:
        path = Path(given).expanduser()
        return path if path.is_absolute() else ROOT / path
    return Path.home() / ".cache" / "course_data"


def ensure_fashionmnist(folder: Path | None = None, *, download: bool | None = None) -> tuple[Path | None, str]:
    """The data root for the lessons, with Fashion-MNIST ready in it, and where it came from.

    (None, why) when it cannot be had here. Never runs apt-get; downloads only when ``download``
    (default: COURSE_OFFLINE unset).
    """
    from course_utils.data.datasets import forced_dataset
    from course_utils.data.fashion_mnist import FILES, fashionmnist_ready, prepare_fashionmnist

    if forced_dataset():
        return None, "COURSE_DATASET=digits is set"
    folder = folder or data_folder()
    download = (not offline()) if download is None else download
    if fashionmnist_ready(folder):
        return folder, f"{folder}"
    flat = all((folder / f"{n}.gz").is_file() or (folder / n).is_file() for n in FILES)
    try:
        if flat:  # the four original files carried as they are: unzip them outside the carried folder
            prepare_fashionmnist(DATA_BUILD, source=folder)
            return DATA_BUILD, f"{folder} (unzipped into {DATA_BUILD})"
        prepare_fashionmnist(folder, download=download)
        return folder, f"{folder}"
    except Exception as e:  # not there, damaged, no network: the caller refuses the run
        return None, " ".join(f"{type(e).__name__}: {e}".split())[:500]


def fell_back(notebook: Path) -> bool:
    """Whether an executed notebook printed the digits fallback (then it is no reference)."""
    try:
        return FALLBACK_MARK in notebook.read_text(errors="replace")
    except OSError:
        return False


# --- the record ----------------------------------------------------------------------------------------------------

def _command_output(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"{cmd[0]} failed: {e}"


def stack_versions() -> list[str]:
    """``name==version`` of the torch stack's installed packages, sorted (a filtered ``pip freeze``)."""
    found = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if STACK.match(name):
            found[name] = dist.version
    return [f"{name}=={version}" for name, version in sorted(found.items())]


def environment(record: dict, profile: str, lessons: list[dict], total: float, budget: float,
                complete: bool = True, setup: dict | None = None) -> dict:
    """What environment.json holds: the machine, the software and each lesson's wall time."""
    import course_utils as cu

    return {
        "machine": cu.results.store.machine_id(record),
        "profile": profile,
        "complete": complete,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **reference_state.commit(ROOT),
        "code_digest": reference_state.code_digest(ROOT),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "record": record,
        "nvidia_smi": _command_output(["nvidia-smi"]),
        "nvidia_smi_query": _command_output(["nvidia-smi", "--format=csv", "--query-gpu=index,name,memory.total,"
                                             "driver_version,clocks.max.sm,power.limit,pstate"]),
        "packages": stack_versions(),
        "setup": setup or {},
        "lessons": lessons,
        "total_seconds": round(total, 1),
        "budget_seconds": budget,
    }


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` by a rename (a kill mid-write leaves the previous file)."""
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def write_archive(archive: Path, folder: Path) -> None:
    """One ``.tar.gz`` of ``folder`` (named by its own name inside), by a rename."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.part")
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    os.replace(tmp, archive)


def note_killed(notebook: Path, message: str) -> None:
    """Append a markdown cell saying why the notebook stops where it does."""
    try:
        import nbformat

        nb = nbformat.read(notebook, as_version=4)
        nb.cells.append(nbformat.v4.new_markdown_cell(f"**make reference:** {message}"))
        nbformat.write(nb, notebook)
    except Exception:  # noqa: S110 - a damaged partial notebook stays as it is
        pass


def keep(staging: Path, out: Path, executed: Path, ok: bool, default: Path) -> list[str]:
    """Move a finished lesson's results from ``staging`` into ``out`` (``failed/`` beside them when not
    ``ok``), with its executed notebook; return the paths written, relative to ``out``."""
    written = []
    folders = set()
    for p in sorted(staging.rglob("*.json")) if staging.is_dir() else []:
        rel = p.relative_to(staging)
        dest = out / rel.parent / ("" if ok else "failed") / rel.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(p), dest)
        folders.add(dest.parent)
        written.append(str(dest.relative_to(out)))
    if executed.exists():
        folder = next(iter(folders)) if len(folders) == 1 else (default if ok else default / "failed")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(executed, folder / executed.name)
        written.append(str((folder / executed.name).relative_to(out)))
    return written


# --- main ----------------------------------------------------------------------------------------------------------

def lesson_estimates(notebooks: Sequence[Path], profile: str) -> dict[str, float]:
    """Each lesson's estimated seconds on an H100/H200 (tools/estimate_gpu.py) for the gpu profile; empty for
    another profile, or if it cannot say."""
    if profile != "gpu":
        return {}
    try:
        from tools.estimate_gpu import lesson_seconds

        return lesson_seconds([str(p) for p in notebooks])
    except Exception as e:  # an estimate only decides what to skip near the end of a budget
        print(f"make reference: no per-lesson estimates ({type(e).__name__}: {e}); --budget cuts at its end only")
        return {}


def torch_problem() -> str | None:
    """Why this Python cannot run the lessons' torch (None: torch >= 2.5 is there)."""
    try:
        import torch
    except ImportError as e:
        return f"this Python ({sys.executable}) has no torch ({e}); use one that has torch >= 2.5 (PY=...)"
    version = tuple(int(x) for x in re.findall(r"\d+", torch.__version__.split("+")[0])[:2])
    if version < (2, 5):
        return f"this Python's torch is {torch.__version__}; the lessons need torch >= 2.5"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the lessons, write results/reference/<machine-id>/, print one line per lesson."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="gpu", choices=PROFILES,
                   help="gpu (the reference); smoke or cpu only to test the plumbing on a CPU")
    p.add_argument("--lessons", nargs="+", metavar="NN",
                   help="only the lessons whose folder starts so (or notebook paths)")
    p.add_argument("--out", type=Path, default=REFERENCE, help="results root (default results/reference)")
    p.add_argument("--build", type=Path, default=ROOT / "build" / "reference", help="executed notebooks")
    p.add_argument("--lesson-timeout", type=int, default=180, help="kill a lesson at this many seconds")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds from now by which every lesson must have ended (a lesson whose estimate does not "
                        "fit what is left is skipped)")
    p.add_argument("--target", type=float, default=540, help="total target in seconds (warned when exceeded)")
    p.add_argument("--resume-from", type=Path, default=None,
                   help="results root whose lessons saved for this machine and code are kept (default --out)")
    p.add_argument("--no-resume", action="store_true", help="run every lesson, whatever is saved")
    p.add_argument("--saved", action="store_true",
                   help="only say how many lessons --resume-from holds for this machine and code (exit 1: none)")
    p.add_argument("--archive", type=Path, default=None,
                   help="rewrite this .tar.gz of <out>/<machine-id>/ after every lesson")
    p.add_argument("--wheelhouse", type=Path, default=WHEELHOUSE, help="wheels for the notebook executor")
    p.add_argument("--run-one", nargs=2, metavar=("NOTEBOOK", "RESULT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.run_one:  # the child: no torch here (the kernel imports it), so it starts in a blink
        return run_one(Path(args.run_one[0]), args.build, args.lesson_timeout, Path(args.run_one[1]))
    t_start = time.perf_counter()
    problem = torch_problem()
    if problem:
        print(f"make reference: {problem}", file=sys.stderr)
        return 2

    import torch

    import course_utils as cu

    if args.saved:
        mid = cu.results.store.machine_id(cu.env.environment_record())
        root = (args.resume_from or args.out).resolve()
        held = reference_state.saved_lessons(root, mid, reference_state.code_digest(ROOT), args.profile)
        print(f"{len(held)} lesson(s) saved in {root / mid} by a run of this code: {' '.join(sorted(held)) or '-'}")
        return 0 if held else 1
    if args.profile == "gpu" and not torch.cuda.is_available():
        print(f"make reference: no CUDA GPU is visible here (torch {torch.__version__}, CUDA build "
              f"{torch.version.cuda or 'none'}), so nothing was run. Run it on a GPU machine; the results go to "
              "results/reference/<machine-id>/.")
        return 0
    out = args.out.resolve()
    if args.profile != "gpu" and (out == REFERENCE or REFERENCE in out.parents):
        print(f"make reference: the {args.profile} profile must not write into {REFERENCE} (the committed GPU "
              "references); give --out a scratch folder.", file=sys.stderr)
        return 2
    notebooks = select_lessons(args.lessons)

    data_root, data_note = ensure_fashionmnist()
    if data_root is None and args.profile == "gpu":
        print(f"make reference: Fashion-MNIST is not available ({data_note}), so the lessons would run on the digits "
              "fallback, and a reference is never saved on it. Put the four original .gz files in a folder of the "
              "checkout that git ignores (e.g. data/fashion-mnist/, which `make wheelhouse` fills) and set "
              "COURSE_DATA=data/fashion-mnist; or install Debian's dataset-fashion-mnist.", file=sys.stderr)
        return 2
    try:
        setup = ensure_kernel(wheelhouse=args.wheelhouse)
        missing = missing_modules(LESSON_MODULES)
        if missing:
            raise SetupError(f"this Python ({sys.executable}) lacks {', '.join(missing)}, which the lessons import "
                             "(binary packages: install them with this machine's own tools)")
    except SetupError as e:
        print(f"make reference: {e}", file=sys.stderr)
        return 2
    setup["data"] = data_note if data_root is not None else f"none ({data_note}): lessons on digits are not saved"

    record = cu.env.environment_record()
    mid = cu.results.store.machine_id(record)
    folder = out / mid
    folder.mkdir(parents=True, exist_ok=True)
    build = args.build.resolve()
    env_file = folder / "environment.json"
    deadline = t_start + args.budget if args.budget is not None else None
    resume_root = (args.resume_from or out).resolve()
    saved = ({} if args.no_resume else
             reference_state.saved_lessons(resume_root, mid, reference_state.code_digest(ROOT), args.profile))
    estimates = lesson_estimates(notebooks, args.profile)
    lessons: list[dict] = []

    def record_progress(complete: bool) -> None:
        write_json(env_file, environment(record, args.profile, lessons, time.perf_counter() - t_start, args.target,
                                         complete=complete, setup=setup))
        if args.archive is not None:
            write_archive(args.archive, folder)

    record_progress(False)  # the machine first: a run cut short still says where it ran
    print(f"reference run: profile {args.profile} on {mid}; {len(notebooks)} lesson(s), "
          f"{args.lesson_timeout} s limit each{f', all done within {args.budget:.0f} s' if deadline else ''}, "
          f"{args.target:.0f} s target in all; executor {setup['how']}; data {setup['data']}"
          + (f"; {len(saved)} lesson(s) already saved at this code, kept" if saved else ""), flush=True)
    child_env = {**os.environ, "COURSE_PROFILE": args.profile,
                 "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if p)}
    if data_root is not None:
        child_env["COURSE_DATA"] = str(data_root)
    failed = []
    with tempfile.TemporaryDirectory(prefix="make-reference-") as tmp:
        for i, src in enumerate(notebooks, 1):
            slug = src.parent.name
            if slug in saved:
                reference_state.carry_over(saved[slug], resume_root, out)
                lessons.append({**saved[slug], "resumed": True})
                print(f"[{i}/{len(notebooks)}] {slug:<32}     -    kept (saved by a run of this code here)", flush=True)
                record_progress(False)
                continue
            limit = float(args.lesson_timeout)
            left = deadline - time.perf_counter() if deadline is not None else float("inf")
            limit = min(limit, left)
            estimate = estimates.get(slug, 0.0)
            if limit < min(MIN_LESSON_S, args.lesson_timeout) or estimate > left:
                why = "skipped: out of time" + (f" (estimate {estimate:.0f} s, {left:.0f} s left)"
                                                if limit >= min(MIN_LESSON_S, args.lesson_timeout) else "")
                lessons.append({"lesson": slug, "ok": False, "seconds": 0.0, "error": why, "files": []})
                print(f"[{i}/{len(notebooks)}] {slug:<32}     -    {why}", flush=True)
                failed.append(slug)
                continue
            result, staging = Path(tmp) / f"{slug}.json", build / slug / "results"
            shutil.rmtree(staging, ignore_errors=True)
            executed = build / slug / src.name
            executed.unlink(missing_ok=True)
            cmd = [*CHILD, "--build", str(build),
                   "--lesson-timeout", str(int(limit) + 1), "--run-one", str(src), str(result)]
            code, seconds = run_with_limit(cmd, limit, env={**child_env, "COURSE_RESULTS_DIR": str(staging)})
            if code is None:
                ok, error = False, f"killed at its {limit:.0f} s limit"
                note_killed(executed, f"this lesson was killed at its {limit:.0f} s limit; the cells above finished.")
            elif result.exists():
                done = json.loads(result.read_text())
                ok, error = done["ok"], re.sub(r"\x1b\[[0-9;]*m", "", done["error"])  # no ANSI colours
            else:
                ok, error = False, f"the runner exited with code {code}"
            if ok and fell_back(executed):
                ok, error = False, "fell back to the digits dataset: not a reference"
            files = keep(staging, out, executed, ok, folder)
            lessons.append({"lesson": slug, "ok": ok, "seconds": round(seconds, 1), "limit_seconds": round(limit, 1),
                            "error": error or None, "files": files})
            status = "ok" if ok else f"FAILED ({error.strip().splitlines()[0] if error.strip() else 'no message'})"
            print(f"[{i}/{len(notebooks)}] {slug:<32} {seconds:7.1f} s  {status}", flush=True)
            if not ok:
                failed.append(slug)
            record_progress(False)
    total = time.perf_counter() - t_start
    record_progress(True)
    print(f"total {total:.1f} s ({'within' if total <= args.target else 'OVER'} the {args.target:.0f} s target); "
          f"wrote {env_file}")
    if failed:
        print(f"{len(failed)} lesson(s) failed: {', '.join(failed)} (their files, if any, are in {folder / 'failed'})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

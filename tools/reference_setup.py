"""`make reference`, before the first lesson: the notebook executor, the data, and a torch that can run the lessons.

1. **The notebook executor** (:func:`ensure_kernel`). nbclient, nbformat, jupyter_client and
   ipykernel are imported from this Python when it has them; else pip installs only the missing
   ones (pip's own resolver, ``--dry-run --report``, decides which) into ``build/kernel-site/pyXY/``,
   which the run and its kernels put first on their path. The wheels come from ``wheelhouse/``
   (``make wheelhouse``) with ``pip --no-index --find-links wheelhouse``; the registry is asked
   only when there is no wheelhouse and ``COURSE_OFFLINE`` is unset. Nothing here runs ``apt-get``.
2. **The data** (:func:`ensure_fashionmnist`). Fashion-MNIST from ``$COURSE_DATA`` (a path relative
   to the checkout is taken from the checkout): a folder holding the four original ``.gz`` files
   (unzipped into ``build/data/``), or a data folder in torchvision's layout; else Debian's folder
   or ``~/.cache/course_data``; else torchvision's download unless ``COURSE_OFFLINE=1``.

Either failing raises or reports why, and tools/make_reference.py refuses the run.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / "wheelhouse"
KERNEL_SITE = ROOT / "build" / "kernel-site"
DATA_BUILD = ROOT / "build" / "data"
#: The notebook executor: what `make reference` needs beyond torch and the lessons' own dependencies.
KERNEL_MODULES = ("nbclient", "nbformat", "jupyter_client", "ipykernel")
#: Distributions to ask pip for (tqdm: pure Python, a lesson dependency a GPU image may lack).
KERNEL_REQUIREMENTS = ("nbclient", "nbformat", "jupyter_client", "ipykernel", "tqdm")
#: What the lessons import that is binary (not in the wheelhouse): the machine must have these.
LESSON_MODULES = ("numpy", "torchvision", "matplotlib", "sklearn", "PIL")

Runner = Callable[..., subprocess.CompletedProcess]


class SetupError(RuntimeError):
    """The run cannot start here (message says why and what to do)."""


def offline() -> bool:
    """Whether ``COURSE_OFFLINE`` forbids the network (set and not 0)."""
    return os.environ.get("COURSE_OFFLINE", "").strip() not in ("", "0")


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

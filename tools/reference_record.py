"""`make reference`'s record: ``environment.json`` (the machine, the software, each lesson's wall time) and its archive.

``environment.json`` (environment record, ``nvidia-smi``, the torch stack's packages, the git commit,
the code digest, how the executor was installed) is written before the first lesson and rewritten
after each; ``--archive`` rewrites one ``.tar.gz`` of the machine's folder after each lesson too
(tools/gpu_window.sh brings that back). Without ``.git`` (a device's copy of the checkout) the
commit comes from ``COURSE_GIT_COMMIT`` (tools/reference_state.py).
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from tools import reference_state

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose versions decide a GPU measurement (what ``pip freeze`` would list of them).
STACK = re.compile(r"^(torch|torchvision|torchaudio|triton|numpy|nvidia-.*|cuda-.*|pytorch-.*)$")


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

"""`make wheelhouse`: the wheels `make reference` needs on a machine that has torch but no Jupyter stack.

A GPU box or cluster node keeps its own Python and torch; what the reference run adds is the
notebook executor (nbclient, nbformat, jupyter_client, ipykernel and what they pull in). This
downloads those wheels, at the versions of requirements-lock.txt where it pins them, for CPython
3.11 and 3.12 on manylinux x86_64, into ``wheelhouse/`` (git-ignored: it travels with the working
tree as a carried folder). Most of them are pure Python (``py3-none-any``); the binary ones are
fetched once per Python version (pyzmq, rpds-py, debugpy) or once for all (abi3: tornado, psutil).

On the GPU machine `make reference` installs from here only what its Python lacks, with
``pip --no-index --find-links wheelhouse`` (tools/make_reference.py, ``ensure_kernel``).

It also puts the four original Fashion-MNIST ``.gz`` files (30 MB, from Debian's folder, or gzipped
from the data cache) in ``data/fashion-mnist/`` (git-ignored), the folder a GPU window carries and
names with ``COURSE_DATA=data/fashion-mnist``.

    python tools/wheelhouse.py                      # what `make wheelhouse` runs (needs the registry)
    python tools/wheelhouse.py --check              # list what is there, by kind, with sizes
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / "wheelhouse"
DATA_CARRY = ROOT / "data" / "fashion-mnist"
#: What `make reference` imports beyond torch and the lessons' own dependencies (tqdm is pure Python
#: and cheap to carry, where a GPU image lacks it).
KERNEL = ("nbclient", "nbformat", "jupyter_client", "ipykernel", "tqdm")
PYTHONS = ("3.11", "3.12")
#: manylinux tags, newest first; pip matches each exactly.
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64")
LIMIT_MB = 20.0
WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>.+)\.whl$")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(lock: Path = ROOT / "requirements-lock.txt") -> dict[str, str]:
    """``name -> version`` from the lock file (names normalised)."""
    pins = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_norm(name)] = version.strip()
    return pins


def requirements(pins: dict[str, str]) -> list[str]:
    """The top-level requirements, pinned as the lock pins them."""
    return [f"{name}=={pins[_norm(name)]}" if _norm(name) in pins else name for name in KERNEL]


def download(dest: Path, python: str, pins: dict[str, str], pip: list[str]) -> None:
    """Every wheel the kernel stack needs on CPython ``python``, manylinux x86_64, into ``dest``."""
    tag = python.replace(".", "")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        # the lock's pins as constraints: the same versions as the course environment where it has them
        f.write("\n".join(f"{name}=={version}" for name, version in sorted(pins.items())) + "\n")
        constraints = f.name
    cmd = [*pip, "download", "--disable-pip-version-check", "--quiet", "--only-binary=:all:",
           "--python-version", python, "--implementation", "cp", "--abi", f"cp{tag}", "--abi", "abi3",
           "--abi", "none", *[a for p in PLATFORMS for a in ("--platform", p)], "--platform", "any",
           "-c", constraints, "-d", str(dest), *requirements(pins)]
    print(f"+ pip download (CPython {python}) {' '.join(requirements(pins))}", flush=True)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        # this machine's pip configuration may name local indexes without every package: pip warns per name
        noise = re.compile(r"^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$")
        print("\n".join(line for line in (done.stdout + done.stderr).splitlines() if not noise.match(line)))
        if done.returncode:
            raise SystemExit(f"pip download failed for CPython {python} (exit {done.returncode})")
    finally:
        Path(constraints).unlink(missing_ok=True)


def describe(dest: Path) -> tuple[list[tuple[str, str, int]], float]:
    """(wheel, kind, bytes) for each wheel in ``dest``, and the total in MB."""
    rows = []
    for whl in sorted(dest.glob("*.whl")):
        m = WHEEL.match(whl.name)
        kind = "pure" if m and m["abi"] == "none" and m["plat"] == "any" else (
            f"binary {m['abi']}" if m else "unknown")
        rows.append((whl.name, kind, whl.stat().st_size))
    return rows, sum(r[2] for r in rows) / 1e6


def duplicates(dest: Path) -> list[str]:
    """Distributions present in two versions (which would make an install ambiguous)."""
    versions: dict[str, set[str]] = {}
    for whl in dest.glob("*.whl"):
        m = WHEEL.match(whl.name)
        if m:
            versions.setdefault(_norm(m["name"]), set()).add(m["version"])
    return sorted(f"{name} ({', '.join(sorted(v))})" for name, v in versions.items() if len(v) > 1)


def report(dest: Path, limit_mb: float) -> int:
    rows, total = describe(dest)
    if not rows:
        print(f"{dest} holds no wheels: run `make wheelhouse` where the registry is reachable")
        return 1
    for name, kind, size in rows:
        print(f"  {size / 1e6:6.2f} MB  {kind:<13} {name}")
    binary = sorted({m["name"] for n, k, _ in rows if k.startswith("binary") and (m := WHEEL.match(n))})
    print(f"{len(rows)} wheels, {total:.1f} MB in all (limit {limit_mb:.0f} MB); binary: {', '.join(binary) or 'none'}")
    dup = duplicates(dest)
    if dup:
        print(f"two versions of: {'; '.join(dup)} (remove the older: pip may pick either)")
        return 1
    if total > limit_mb:
        print(f"OVER the {limit_mb:.0f} MB limit")
        return 1
    return 0


def carry_fashionmnist(dest: Path = DATA_CARRY) -> str:
    """The four original ``.gz`` files in ``dest`` (copied, or gzipped from an unzipped cache); what was done."""
    sys.path.insert(0, str(ROOT))
    from course_utils.data.fashion_mnist import FILES, SYSTEM_DIR, _valid, raw_folder

    cache = raw_folder(Path(os.environ.get("COURSE_DATA", Path.home() / ".cache" / "course_data")))
    default = raw_folder(Path.home() / ".cache" / "course_data")
    dest.mkdir(parents=True, exist_ok=True)
    done = []
    for name, spec in FILES.items():
        target = dest / f"{name}.gz"
        if target.is_file() and target.stat().st_size > 0:
            continue
        tmp = target.with_name(f".{target.name}.part")
        for folder in (SYSTEM_DIR, cache, default):
            if (folder / f"{name}.gz").is_file():
                shutil.copyfile(folder / f"{name}.gz", tmp)
                break
            if _valid(folder / name, *spec):
                with open(folder / name, "rb") as f, gzip.open(tmp, "wb", compresslevel=6) as out:
                    shutil.copyfileobj(f, out, length=1 << 20)
                break
        else:
            return (f"Fashion-MNIST not found (Debian's {SYSTEM_DIR}, {cache}): run `make data` first; "
                    f"{dest} is incomplete")
        os.replace(tmp, target)
        done.append(name)
    size = sum(p.stat().st_size for p in dest.glob("*.gz")) / 1e6
    added = f"; added {', '.join(done)}" if done else ""
    return f"Fashion-MNIST: {dest} holds the four .gz files ({size:.1f} MB){added}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dest", type=Path, default=WHEELHOUSE, help="folder of wheels (default wheelhouse/)")
    p.add_argument("--python", nargs="+", default=list(PYTHONS), metavar="X.Y", help="CPython versions")
    p.add_argument("--limit-mb", type=float, default=LIMIT_MB, help="fail when the wheels add up to more")
    p.add_argument("--check", action="store_true", help="only list what is there")
    p.add_argument("--no-data", action="store_true", help="do not put the Fashion-MNIST .gz files in data/")
    args = p.parse_args(argv)
    if not args.no_data and not args.check:
        print(carry_fashionmnist())
    if not args.check:
        args.dest.mkdir(parents=True, exist_ok=True)
        pins = lock_pins()
        for python in args.python:
            download(args.dest, python, pins, [sys.executable, "-m", "pip"])
    return report(args.dest, args.limit_mb)


if __name__ == "__main__":
    sys.exit(main())

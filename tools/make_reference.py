"""`make reference`: run every lesson in the gpu profile and keep the results as the course's reference.

Each solution notebook is executed (with tools/run_notebooks.py's ``run_notebook``, which also
chooses the lessons: ``select_lessons``) into
build/reference/, in a child process that is killed, kernel included, past the per-lesson limit.
The lessons save their results with ``COURSE_RESULTS_DIR=results/reference``, so they land in
results/reference/<machine-id>/; the executed notebooks are copied beside them, and
environment.json records the machine (environment record, ``nvidia-smi``, the torch stack's
packages, the git commit) and each lesson's wall time. Target: 8 min in all on an H100/H200.

Without a CUDA GPU it says so and exits 0. ``--profile smoke`` (or ``cpu``) runs the same
plumbing on a CPU for testing, into the folders given by ``--out`` and ``--build``; it never
writes into results/reference/.

    python tools/make_reference.py                                    # what `make reference` runs
    python tools/make_reference.py --profile smoke --lessons 00 --out /tmp/ref --build /tmp/b
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout, for `tools` and `course_utils`

import torch  # noqa: E402

import course_utils as cu  # noqa: E402
from tools.run_notebooks import ROOT, run_notebook, select_lessons  # noqa: E402  (the lower of the two tools)

REFERENCE = ROOT / "results" / "reference"
#: The packages whose versions decide a GPU measurement (what ``pip freeze`` would list of them).
STACK = re.compile(r"^(torch|torchvision|torchaudio|triton|numpy|nvidia-.*|cuda-.*|pytorch-.*)$")


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


def run_with_limit(cmd: list[str], limit: float, env: dict[str, str] | None = None) -> tuple[int | None, float]:
    """Run ``cmd``; past ``limit`` seconds kill it and everything it started (a Jupyter kernel runs in
    a session of its own, so a process-group kill would miss it). Return (exit code or None, seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait(timeout=limit), time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        for pid in [*reversed(_descendants(proc.pid)), proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        return None, time.perf_counter() - t0


def run_one(src: Path, build: Path, limit: int, result: Path) -> int:
    """Child process: execute one notebook with run_notebook and write (ok, seconds, error) as JSON."""
    ok, seconds, error = run_notebook(src, build, timeout=limit)
    result.write_text(json.dumps({"ok": ok, "seconds": seconds, "error": error}))
    return 0


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


def _git(*args: str) -> str | None:
    return _command_output(["git", "-C", str(ROOT), *args]) or None


def environment(record: dict, profile: str, lessons: list[dict], total: float, budget: float) -> dict:
    """What environment.json holds: the machine, the software and each lesson's wall time."""
    return {
        "machine": cu.results.machine_id(record),
        "profile": profile,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "record": record,
        "nvidia_smi": _command_output(["nvidia-smi"]),
        "nvidia_smi_query": _command_output(["nvidia-smi", "--format=csv", "--query-gpu=index,name,memory.total,"
                                             "driver_version,clocks.max.sm,power.limit,pstate"]),
        "packages": stack_versions(),
        "lessons": lessons,
        "total_seconds": round(total, 1),
        "budget_seconds": budget,
    }


def _beside_results(out: Path, slug: str, since: float, default: Path) -> Path:
    """The folder the lesson saved its results in during this run (the newest), else ``default``."""
    saved = [p for p in out.rglob(f"{slug}*.json") if p.stat().st_mtime >= since]
    return max(saved, key=lambda p: p.stat().st_mtime).parent if saved else default


def main(argv: list[str] | None = None) -> int:
    """Run the lessons, write results/reference/<machine-id>/, print one line per lesson."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="gpu", choices=cu.PROFILES,
                   help="gpu (the reference); smoke or cpu only to test the plumbing on a CPU")
    p.add_argument("--lessons", nargs="+", metavar="NN",
                   help="only the lessons whose folder starts so (or notebook paths)")
    p.add_argument("--out", type=Path, default=REFERENCE, help="results root (default results/reference)")
    p.add_argument("--build", type=Path, default=ROOT / "build" / "reference", help="executed notebooks")
    p.add_argument("--lesson-timeout", type=int, default=180, help="abort a lesson past this many seconds")
    p.add_argument("--budget", type=float, default=480, help="total target in seconds (warned when exceeded)")
    p.add_argument("--run-one", nargs=2, metavar=("NOTEBOOK", "RESULT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.run_one:
        return run_one(Path(args.run_one[0]), args.build, args.lesson_timeout, Path(args.run_one[1]))

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

    os.environ.setdefault("MPLBACKEND", "Agg")
    record = cu.environment_record()
    mid = cu.results.machine_id(record)
    folder = out / mid
    folder.mkdir(parents=True, exist_ok=True)
    build = args.build.resolve()
    notebooks = select_lessons(args.lessons)
    print(f"reference run: profile {args.profile} on {mid}; {len(notebooks)} lesson(s), "
          f"{args.lesson_timeout} s limit each, {args.budget:.0f} s target in all")
    child_env = {**os.environ, "COURSE_PROFILE": args.profile, "COURSE_RESULTS_DIR": str(out)}
    lessons, failed, t_all = [], [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="make-reference-") as tmp:
        for i, src in enumerate(notebooks, 1):
            slug, result, since = src.parent.name, Path(tmp) / f"{src.parent.name}.json", time.time() - 1
            cmd = [sys.executable, str(Path(__file__).resolve()), "--build", str(build),
                   "--lesson-timeout", str(args.lesson_timeout), "--run-one", str(src), str(result)]
            code, seconds = run_with_limit(cmd, args.lesson_timeout + 30, env=child_env)
            if code is None:
                ok, error = False, f"aborted past the {args.lesson_timeout} s limit"
            elif result.exists():
                done = json.loads(result.read_text())
                ok, error = done["ok"], re.sub(r"\x1b\[[0-9;]*m", "", done["error"])  # no ANSI colours
            else:
                ok, error = False, f"the runner exited with code {code}"
            executed = build / slug / src.name
            if ok and executed.exists():
                shutil.copy2(executed, _beside_results(out, slug, since, folder) / src.name)
            lessons.append({"lesson": slug, "ok": ok, "seconds": round(seconds, 1), "error": error or None})
            status = "ok" if ok else f"FAILED ({error.strip().splitlines()[0] if error.strip() else 'no message'})"
            print(f"[{i}/{len(notebooks)}] {slug:<32} {seconds:7.1f} s  {status}", flush=True)
            if not ok:
                failed.append(slug)
    total = time.perf_counter() - t_all
    env_file = folder / "environment.json"
    env_file.write_text(json.dumps(environment(record, args.profile, lessons, total, args.budget), indent=2,
                                   ensure_ascii=False) + "\n")
    print(f"total {total:.1f} s ({'within' if total <= args.budget else 'OVER'} the {args.budget:.0f} s target); "
          f"wrote {env_file}")
    if failed:
        print(f"{len(failed)} lesson(s) failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`make compat`: the course on the oldest torch it promises, and on the GPU box's stack, each in a venv of its own.

    python tools/compat.py                       # every stack below
    python tools/compat.py floor --lessons 14 18 # one stack, some lessons
    python tools/compat.py gpu-box --no-tests    # lessons only

For each stack: a venv in ``build/compat/<stack>/venv`` (kept, and rebuilt only when its pins change) with
the course's pinned requirements except the torch family (torch, torchvision, triton, sympy, nvidia-*, cuda-*:
each torch pins its own), then the
stack's torch and torchvision from the package registry (on Linux x86_64 a CUDA build, which runs on the CPU).
Then, with that venv's Python:

1. the unit tests: ``pytest -m "not slow and not grading"`` (the course's own test files, no notebook runs);
2. every lesson's solution notebook in the smoke profile (``tools/run_notebooks.run_notebook``), its results
   written to a temporary folder, never to ``results/``.

Each stack's figures go to ``build/compat/<stack>/summary.json`` and a table at the end; exit status 1 if
anything failed. A stack whose Python is missing (``python3.12``, or pyenv's) is reported and skipped.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "compat"
#: What each torch release pins itself (left to pip with the stack's torch), not taken from the lock.
TORCH_FAMILY = re.compile(r"^(torch|torchvision|torchaudio|triton|sympy|mpmath|nvidia-[\w-]+|cuda-[\w-]+)==",
                          re.IGNORECASE)


@dataclass(frozen=True)
class Stack:
    """A Python and torch pair the course promises to run on."""

    python: str  # "3.11"
    torch: str
    torchvision: str
    why: str


#: The floor (pyproject.toml's ``torch>=``) and the stack of the GPU box the references run on.
STACKS: dict[str, Stack] = {
    "floor": Stack("3.11", "2.5.1", "0.20.1", "the oldest torch pyproject.toml admits"),
    "gpu-box": Stack("3.12", "2.11.0", "0.26.0", "the reference GPU box's Python and torch"),
}


def find_python(version: str) -> str | None:
    """A ``python<version>`` on PATH, or pyenv's newest build of that version; None when there is none."""
    found = shutil.which(f"python{version}")
    if found and not found.endswith("/shims/python" + version):
        return found
    builds = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")),
                    key=lambda p: [int(x) for x in re.findall(r"\d+", Path(p).parents[1].name)])
    return builds[-1] if builds else found


def requirements(stack: Stack) -> list[str]:
    """The lock's pins without the torch family, then the stack's torch and torchvision."""
    lock = (ROOT / "requirements-lock.txt").read_text().splitlines()
    pins = [line for line in lock if line and not line.startswith("#") and not TORCH_FAMILY.match(line)]
    # setuptools >= 70.1 builds wheels by itself (tests/test_results_and_plots.py builds the course's), as .venv's does
    return pins + [f"torch=={stack.torch}", f"torchvision=={stack.torchvision}", "setuptools>=70.1"]


def build_venv(name: str, stack: Stack, python: str) -> Path:
    """Create (or reuse) the stack's venv; return its Python."""
    venv = BUILD / name / "venv"
    reqs = "\n".join(requirements(stack)) + "\n"
    stamp = venv / "compat-requirements.txt"
    py = venv / "bin" / "python"
    if py.exists() and stamp.exists() and stamp.read_text() == reqs:
        return py
    shutil.rmtree(venv, ignore_errors=True)
    print(f"[{name}] creating {venv.relative_to(ROOT)} with {python} (torch {stack.torch}: a few GB the first time)",
          flush=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    req_file = BUILD / name / "requirements.txt"
    req_file.write_text(reqs)
    done = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r",
                           str(req_file)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"[{name}] pip could not install the stack:\n{(done.stderr or done.stdout)[-3000:]}")
    stamp.write_text(reqs)
    return py


def run_tests(py: Path, log: Path) -> dict:
    """The unit tests under ``py``; their counts and wall time."""
    started = time.perf_counter()
    cmd = [str(py), "-m", "pytest", "-m", "not slow and not grading", "-q", "-p", "no:cacheprovider",
           "-o", "addopts="]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    log.write_text(out.stdout + out.stderr)
    last = next((line for line in reversed(out.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", line)), "")
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?)", last)}
    failed = [line.split(" ")[1] for line in out.stdout.splitlines() if line.startswith("FAILED ")]
    return {"ok": out.returncode == 0, "seconds": round(time.perf_counter() - started, 1), "counts": counts,
            "failed": failed, "log": str(log.relative_to(ROOT))}


LESSON_RUNNER = """
import json, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tools.run_notebooks import run_notebook
ok, seconds, error = run_notebook(Path({src!r}), Path({out!r}), timeout=900)
print(json.dumps({{"ok": ok, "seconds": round(seconds, 1), "error": error}}))
"""


def run_lessons(py: Path, name: str, lessons: list[str] | None) -> list[dict]:
    """Every (or the named) lesson's solution in the smoke profile under ``py``; one row each."""
    sys.path.insert(0, str(ROOT))
    from tools.run_notebooks import select_lessons

    rows = []
    out_dir = BUILD / name / "lessons"
    with tempfile.TemporaryDirectory(prefix="compat-results-") as results:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COURSE_PROFILE": "smoke", "COURSE_RESULTS_DIR": results,
               "PATH": f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        srcs = select_lessons(lessons)
        for i, src in enumerate(srcs, 1):
            code = LESSON_RUNNER.format(root=str(ROOT), src=str(src), out=str(out_dir))
            out = subprocess.run([str(py), "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
            try:
                row = json.loads(out.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                row = {"ok": False, "seconds": 0.0, "error": (out.stderr.strip().splitlines() or ["no output"])[-1]}
            rows.append({"lesson": src.parent.name, **row})
            print(f"[{name}] [{i}/{len(srcs)}] {src.parent.name:<30} {row['seconds']:7.1f} s  "
                  f"{'ok' if row['ok'] else 'FAILED: ' + row['error']}", flush=True)
    return rows


def check_stack(name: str, stack: Stack, lessons: list[str] | None, tests: bool) -> dict:
    """Build the stack's venv, run the tests and lessons; the summary (also written to summary.json)."""
    python = find_python(stack.python)
    if python is None:
        return {"stack": name, "skipped": f"no Python {stack.python} here (python{stack.python} or pyenv)"}
    (BUILD / name).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    py = build_venv(name, stack, python)
    setup_s = time.perf_counter() - started
    probe = subprocess.run([str(py), "-c", "import sys, torch; print(sys.version.split()[0], torch.__version__)"],
                           capture_output=True, text=True, check=True).stdout.split()
    summary: dict = {"stack": name, "why": stack.why, "python": probe[0], "torch": probe[1],
                     "venv_seconds": round(setup_s, 1)}
    if tests:
        summary["tests"] = run_tests(py, BUILD / name / "pytest.log")
        t = summary["tests"]
        print(f"[{name}] unit tests: {t['counts']} in {t['seconds']:.0f} s" + (f"; failed {t['failed']}"
                                                                               if t["failed"] else ""), flush=True)
    summary["lessons"] = run_lessons(py, name, lessons)
    summary["ok"] = all(r["ok"] for r in summary["lessons"]) and summary.get("tests", {"ok": True})["ok"]
    (BUILD / name / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    """Check each named stack (all by default); 1 if any failed."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stacks", nargs="*", metavar="STACK", help=f"of {', '.join(STACKS)} (default: all)")
    p.add_argument("--lessons", nargs="+", metavar="NN", help="only these lessons (default: all)")
    p.add_argument("--no-tests", action="store_true", help="lessons only")
    args = p.parse_args(argv)
    unknown = [n for n in args.stacks if n not in STACKS]
    if unknown:
        p.error(f"unknown stack {', '.join(unknown)}: choose from {', '.join(STACKS)}")
    summaries = [check_stack(n, STACKS[n], args.lessons, not args.no_tests) for n in (args.stacks or STACKS)]
    print()
    for s in summaries:
        if "skipped" in s:
            print(f"{s['stack']:<8} skipped: {s['skipped']}")
            continue
        lessons = s["lessons"]
        passed = sum(r["ok"] for r in lessons)
        tests = s.get("tests")
        test_text = f"unit tests {tests['counts']} in {tests['seconds']:.0f} s; " if tests else ""
        print(f"{s['stack']:<8} Python {s['python']}, torch {s['torch']}: {test_text}lessons {passed}/{len(lessons)} "
              f"in {sum(r['seconds'] for r in lessons):.0f} s"
              + "".join(f"\n    FAILED {r['lesson']}: {r['error']}" for r in lessons if not r["ok"])
              + "".join(f"\n    FAILED {t}" for t in (tests or {}).get("failed", [])))
    return 0 if all(s.get("ok", True) for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())

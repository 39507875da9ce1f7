"""`make reference`: run every lesson in the gpu profile and keep the results as the course's reference.

Runs with any Python that has torch >= 2.5 (`PY=python3 make reference` on a GPU box that keeps its
own torch). In order:

1. **The notebook executor** and 2. **the data** (tools/reference_setup.py): nbclient & co. from
   this Python, else pip installs only the missing ones into ``build/kernel-site/pyXY/`` from
   ``wheelhouse/`` (the registry only when there is no wheelhouse and ``COURSE_OFFLINE`` is unset;
   nothing here runs ``apt-get``); Fashion-MNIST from ``$COURSE_DATA``, Debian's folder, the cache
   or torchvision's download. Without it (or with ``COURSE_DATASET=digits``) a gpu run is refused:
   a reference is never saved on the digits fallback, and a lesson whose output shows the fallback
   is not saved either.
3. **The lessons** (tools/reference_lesson.py), each in a child process with a watchdog that kills
   it, kernel included, at its limit (``--lesson-timeout``, and no later than ``--budget`` seconds
   after the start). A killed lesson keeps every cell that finished; a failed, killed or fallback
   lesson's files go to ``<out>/<machine-id>/failed/``, so it never replaces a good reference.
4. **The record** (tools/reference_record.py): ``environment.json`` is written before the first
   lesson and rewritten after each, with each lesson's wall time; ``--archive`` rewrites one
   ``.tar.gz`` of the machine's folder after each lesson too (tools/gpu_window.sh brings that back).
5. **Resuming** (tools/reference_state.py). A lesson already saved for this machine by a run of the
   same code in ``--resume-from`` (default: ``--out``) is not run again: its files are kept (copied
   into ``--out`` when that differs) and listed as resumed. ``--no-resume`` runs every lesson.
   ``--budget S``: every lesson ends within S seconds of the start; a lesson whose estimate
   (tools/estimate_gpu.py) does not fit what is left is skipped, and a smaller one after it may still run.

Target: 9.5 min in all on an H100/H200 (tools/estimate_gpu.py). Without a CUDA GPU, the gpu profile says
so and exits 0. ``--profile smoke`` (or ``cpu``) runs the same plumbing on a CPU for testing, into the
folders given by ``--out`` and ``--build``; it never writes into results/reference/.

    python tools/make_reference.py                                    # what `make reference` runs
    python tools/make_reference.py --profile smoke --lessons 00 --out /tmp/ref --build /tmp/b
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout, for `tools` and `course_utils`

from tools import reference_state  # noqa: E402
from tools.reference_lesson import lesson_estimates, run_lesson, run_one, time_for  # noqa: E402
from tools.reference_record import environment, write_archive, write_json  # noqa: E402
from tools.reference_setup import (  # noqa: E402
    LESSON_MODULES,
    WHEELHOUSE,
    SetupError,
    ensure_fashionmnist,
    ensure_kernel,
    missing_modules,
    torch_problem,
)
from tools.run_notebooks import select_lessons  # noqa: E402  (the lower of the two tools)

REFERENCE = ROOT / "results" / "reference"
#: course_utils.env.PROFILES (a test keeps them equal): named here so that the child imports no torch.
PROFILES = ("smoke", "cpu", "gpu")
#: The child that executes one lesson (``--run-one``); the tests put a kernel-free stand-in here.
CHILD = [sys.executable, str(Path(__file__).resolve())]


class Refused(Exception):
    """The run ends before its first lesson: ``code`` is the exit status, the message says why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def parser() -> argparse.ArgumentParser:
    """The command line (``--run-one``, the child's, is not shown)."""
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
    return p


def count_saved(args: argparse.Namespace) -> int:
    """``--saved``: say how many lessons ``--resume-from`` holds for this machine and code (exit 1: none)."""
    import course_utils as cu

    mid = cu.results.store.machine_id(cu.env.environment_record())
    root = (args.resume_from or args.out).resolve()
    held = reference_state.saved_lessons(root, mid, reference_state.code_digest(ROOT), args.profile)
    print(f"{len(held)} lesson(s) saved in {root / mid} by a run of this code: {' '.join(sorted(held)) or '-'}")
    return 0 if held else 1


def check_where(args: argparse.Namespace) -> Path:
    """The results root, once this machine may write a reference of ``args.profile`` there.

    Raises:
        Refused: no CUDA GPU for the gpu profile (exit 0: nothing to do here), or a CPU profile
            pointed at the committed references (exit 2).
    """
    import torch

    if args.profile == "gpu" and not torch.cuda.is_available():
        raise Refused(0, f"no CUDA GPU is visible here (torch {torch.__version__}, CUDA build "
                         f"{torch.version.cuda or 'none'}), so nothing was run. Run it on a GPU machine; the results "
                         "go to results/reference/<machine-id>/.")
    out = args.out.resolve()
    if args.profile != "gpu" and (out == REFERENCE or REFERENCE in out.parents):
        raise Refused(2, f"the {args.profile} profile must not write into {REFERENCE} (the committed GPU "
                         "references); give --out a scratch folder.")
    return out


def get_ready(args: argparse.Namespace) -> tuple[Path | None, dict]:
    """The data root (None: digits only) and the executor's set-up, or why the run cannot start.

    Raises:
        Refused: no Fashion-MNIST for a gpu run (a reference is never saved on digits), or no
            notebook executor or lesson dependency here (exit 2).
    """
    data_root, data_note = ensure_fashionmnist()
    if data_root is None and args.profile == "gpu":
        raise Refused(2, f"Fashion-MNIST is not available ({data_note}), so the lessons would run on the digits "
                         "fallback, and a reference is never saved on it. Put the four original .gz files in a folder "
                         "of the checkout that git ignores (e.g. data/fashion-mnist/, which `make wheelhouse` fills) "
                         "and set COURSE_DATA=data/fashion-mnist; or install Debian's dataset-fashion-mnist.")
    try:
        setup = ensure_kernel(wheelhouse=args.wheelhouse)
        missing = missing_modules(LESSON_MODULES)
        if missing:
            raise SetupError(f"this Python ({sys.executable}) lacks {', '.join(missing)}, which the lessons import "
                             "(binary packages: install them with this machine's own tools)")
    except SetupError as e:
        raise Refused(2, str(e)) from e
    setup["data"] = data_note if data_root is not None else f"none ({data_note}): lessons on digits are not saved"
    return data_root, setup


@dataclass
class Run:
    """One reference run: where it writes, and environment.json's lessons so far (rewritten after each)."""

    args: argparse.Namespace
    folder: Path
    record: dict
    setup: dict
    t_start: float
    lessons: list[dict] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def save(self, complete: bool = False) -> None:
        """Rewrite environment.json (and ``--archive``) with what has run so far."""
        write_json(self.folder / "environment.json",
                   environment(self.record, self.args.profile, self.lessons, time.perf_counter() - self.t_start,
                               self.args.target, complete=complete, setup=self.setup))
        if self.args.archive is not None:
            write_archive(self.args.archive, self.folder)


def run_lessons(args: argparse.Namespace, out: Path, notebooks: list[Path], data_root: Path | None, setup: dict,
                t_start: float) -> int:
    """Run (or keep, or skip) every lesson in turn, one line each; 1 when any failed or was skipped."""
    import course_utils as cu

    record = cu.env.environment_record()
    mid = cu.results.store.machine_id(record)
    run = Run(args, out / mid, record, setup, t_start)
    run.folder.mkdir(parents=True, exist_ok=True)
    deadline = t_start + args.budget if args.budget is not None else None
    resume_root = (args.resume_from or out).resolve()
    saved = ({} if args.no_resume else
             reference_state.saved_lessons(resume_root, mid, reference_state.code_digest(ROOT), args.profile))
    estimates = lesson_estimates(notebooks, args.profile)
    run.save()  # the machine first: a run cut short still says where it ran
    print(f"reference run: profile {args.profile} on {mid}; {len(notebooks)} lesson(s), "
          f"{args.lesson_timeout} s limit each{f', all done within {args.budget:.0f} s' if deadline else ''}, "
          f"{args.target:.0f} s target in all; executor {setup['how']}; data {setup['data']}"
          + (f"; {len(saved)} lesson(s) already saved at this code, kept" if saved else ""), flush=True)
    child_env = {**os.environ, "COURSE_PROFILE": args.profile,
                 "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if p)}
    if data_root is not None:
        child_env["COURSE_DATA"] = str(data_root)
    with tempfile.TemporaryDirectory(prefix="make-reference-") as tmp:
        for i, src in enumerate(notebooks, 1):
            slug, tag = src.parent.name, f"[{i}/{len(notebooks)}] {src.parent.name:<32}"
            if slug in saved:
                reference_state.carry_over(saved[slug], resume_root, out)
                run.lessons.append({**saved[slug], "resumed": True})
                print(f"{tag}     -    kept (saved by a run of this code here)", flush=True)
                run.save()
                continue
            limit, skipped = time_for(args.lesson_timeout, deadline, estimates.get(slug, 0.0))
            if skipped:
                run.lessons.append({"lesson": slug, "ok": False, "seconds": 0.0, "error": skipped, "files": []})
                print(f"{tag}     -    {skipped}", flush=True)
                run.failed.append(slug)
                continue
            entry = run_lesson(src, child=CHILD, build=args.build.resolve(), out=out, folder=run.folder, limit=limit,
                               env=child_env, scratch=Path(tmp))
            run.lessons.append(entry)
            error = (entry["error"] or "").strip()
            status = "ok" if entry["ok"] else f"FAILED ({error.splitlines()[0] if error else 'no message'})"
            print(f"{tag} {entry['seconds']:7.1f} s  {status}", flush=True)
            if not entry["ok"]:
                run.failed.append(slug)
            run.save()
    total = time.perf_counter() - t_start
    run.save(complete=True)
    print(f"total {total:.1f} s ({'within' if total <= args.target else 'OVER'} the {args.target:.0f} s target); "
          f"wrote {run.folder / 'environment.json'}")
    if run.failed:
        print(f"{len(run.failed)} lesson(s) failed: {', '.join(run.failed)} (their files, if any, are in "
              f"{run.folder / 'failed'})")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the lessons, write results/reference/<machine-id>/, print one line per lesson."""
    args = parser().parse_args(argv)
    if args.run_one:  # the child: no torch here (the kernel imports it), so it starts in a blink
        return run_one(Path(args.run_one[0]), args.build, args.lesson_timeout, Path(args.run_one[1]))
    t_start = time.perf_counter()
    problem = torch_problem()
    if problem:
        print(f"make reference: {problem}", file=sys.stderr)
        return 2
    if args.saved:
        return count_saved(args)
    try:
        out = check_where(args)
        notebooks = select_lessons(args.lessons)
        data_root, setup = get_ready(args)
    except Refused as e:
        print(f"make reference: {e}", file=sys.stderr if e.code else sys.stdout)
        return e.code
    return run_lessons(args, out, notebooks, data_root, setup, t_start)


if __name__ == "__main__":
    sys.exit(main())

"""`make run`: execute every solution notebook headless into build/, then print the scoreboard.

Sources in solutions/ are never touched: each notebook is copied to build/NN_slug/ and executed
there, in the profile the machine calls for (COURSE_PROFILE overrides). Each lesson saves its
results as results/<machine-id>/<lesson>.<profile>.json, so a run replaces only the earlier run of
the same profile (a smoke run never replaces a cpu or gpu result). The scoreboard reads them back,
with the reference runs (results/reference/, or the copy shipped with the package), and
build/report.md shows it with a chart: each row names the kind of its interval and the source's
claim.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def select_lessons(names: list[str] | None) -> list[Path]:
    """Solution notebooks: all, or those whose folder starts with one of ``names`` (``00``,
    ``04_mixed``); a name that is a path to a notebook is taken as it is (tests use that)."""
    notebooks = sorted(ROOT.glob("solutions/[0-9]*/*.ipynb"))
    if not names:
        return notebooks
    chosen, missing = [], []
    for name in names:
        if name.endswith(".ipynb") and Path(name).is_file():
            chosen.append(Path(name).resolve())
            continue
        matches = [nb for nb in notebooks if nb.parent.name.startswith(name)]
        (chosen.extend(matches) if matches else missing.append(name))
    if missing:
        raise SystemExit(f"no lesson in solutions/ starts with {', '.join(missing)}; "
                         f"there are {', '.join(nb.parent.name for nb in notebooks)}")
    return list(dict.fromkeys(chosen))


@dataclass
class Executed:
    """One notebook run: the executed notebook, its wall time and the error ("" when it ran clean)."""

    nb: Any
    seconds: float
    error: str

    @property
    def stdout(self) -> str:
        """Everything the notebook's code cells printed to stdout, in order."""
        return "".join(o.get("text", "") for c in self.nb.cells if c.cell_type == "code"
                       for o in c.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stdout")


def write_atomically(nb: Any, path: Path) -> None:
    """Write notebook ``nb`` to ``path`` by a rename, so that a kill mid-write leaves the previous file."""
    import nbformat

    tmp = path.with_name(f".{path.name}.part")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)


def execute_notebook(src: Path, out_dir: Path, timeout: int, save_to: Path | None = None,
                     env: dict[str, str] | None = None) -> Executed:
    """Execute ``src`` with ``out_dir`` as its working folder, in a fresh kernel shut down afterwards.

    A cell error, a dead kernel or a timeout is caught: ``error`` keeps its first and last lines,
    without terminal colours. With ``save_to``, the notebook is written there after every cell, so a
    run killed from outside (tools/make_reference.py's watchdog) leaves every cell that finished.
    The kernel gets this process's environment without ``MPLBACKEND``: it then draws with its own
    default, the inline backend (never a GUI), and the executed notebook keeps its figures; a
    non-interactive backend inherited from the caller (pytest's conftest sets one) would keep none.
    ``env`` adds to (or overrides) the kernel's environment, for this run only.
    """
    # the Jupyter stack is needed only here: choosing lessons, and `make reference` without a GPU, work without it
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    out_dir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(src, as_version=4)
    # IPC sockets: the kernel is local, and ipykernel warns about unencrypted TCP otherwise
    km = KernelManager(kernel_name="python3", transport="ipc",
                       connection_file=str(Path(tempfile.mkdtemp(prefix="kernel-")) / "kernel.json"))
    hooks: dict[str, Any] = {}
    if save_to is not None:
        save_to.parent.mkdir(parents=True, exist_ok=True)
        hooks["on_cell_executed"] = lambda cell, cell_index, execute_reply: write_atomically(nb, save_to)
    client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(out_dir)}}, **hooks)
    t0 = time.perf_counter()
    error = ""
    kernel_env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"} | dict(env or {})
    try:
        client.execute(env=kernel_env)  # passed on to KernelManager.start_kernel
    except Exception as e:  # a cell error, a dead kernel or a timeout
        lines = ANSI.sub("", f"{type(e).__name__}: {e}").strip().splitlines()
        error = "\n".join(lines[:4] + ["..."] + lines[-12:]) if len(lines) > 16 else "\n".join(lines)
    finally:
        if km.has_kernel:  # a client given its kernel manager leaves the kernel to its owner
            km.shutdown_kernel(now=True)
        shutil.rmtree(Path(km.connection_file).parent, ignore_errors=True)
    return Executed(nb, time.perf_counter() - t0, error)


def run_notebook(src: Path, build: Path, timeout: int, progressive: bool = False) -> tuple[bool, float, str]:
    """Execute ``src`` into ``build/<slug>/``; return (ok, seconds, the error's last line).

    ``progressive``: write the executed notebook after every cell, not only at the end.
    """
    from course_utils.measure.forcing import READINGS_LOG_ENV

    out_dir = build / src.parent.name
    target = out_dir / src.name
    log = out_dir / READINGS_LOG
    log.unlink(missing_ok=True)
    run = execute_notebook(src, out_dir, timeout, save_to=target if progressive else None,
                           env={READINGS_LOG_ENV: str(log)})
    write_atomically(run.nb, target)
    return not run.error, run.seconds, run.error.splitlines()[-1] if run.error else ""


#: Each lesson's readings with the numbers they read, one JSON line each (course_utils.measure.forcing.log_reading).
READINGS_LOG = "readings.jsonl"


def readings_page(build: Path, lessons: list[Path]) -> str:
    """Markdown: every reading each lesson printed, under the numbers it reads, to check one against the other."""
    import json

    lines = ["# Every reading beside the numbers it reads\n",
             "Each lesson's printed interpretations (through `cu.reading`), in order, each under the result it "
             "read: names, ratio and interval, per-seed counts. A sentence must claim nothing these numbers "
             "contradict.\n"]
    for src in lessons:
        log = build / src.parent.name / READINGS_LOG
        entries = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        lines.append(f"## {src.parent.name} ({len(entries)} reading{'s' if len(entries) != 1 else ''})\n")
        for e in entries:
            lines.append(f"- **{e['numbers']}**  \n  {e['text']}")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every lesson (or those named), print one line per notebook, then the scoreboard; 1 if any failed."""
    import argparse

    import course_utils as cu

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lessons", nargs="+", metavar="NN",
                   help="only the lessons whose folder starts so (e.g. 02 17); all when omitted")
    args = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")  # the scoreboard's chart, drawn here and saved, never shown (the kernels keep their own)
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    env = cu.setup(verbose=False)
    notebooks = select_lessons(args.lessons)
    print(f"profile {env.profile} on {env.device.type}; {len(notebooks)} lesson notebook(s)")
    if not notebooks:
        print("No lesson notebooks in solutions/ yet: nothing to run.")
    failed = []
    for i, src in enumerate(notebooks, 1):
        ok, seconds, error = run_notebook(src, build, timeout=1800)
        status = "ok" if ok else f"FAILED ({error})"
        print(f"[{i}/{len(notebooks)}] {src.parent.name:<32} {seconds:7.1f} s  {status}", flush=True)
        if not ok:
            failed.append(src.parent.name)
    board = cu.results.report.scoreboard(cu.results.store.results_dir())
    print()
    print(board)
    chart = build / "scoreboard.png"
    board.plot(chart)
    report = build / "report.md"
    report.write_text(
        "# Scoreboard: each trick measured on this machine, beside the source's claim\n\n"
        f"Profile `{env.profile}`, device `{env.device.type}`. Executed notebooks are in `build/`. "
        "Each row shows the run of the largest profile on its machine, with the kind of its interval: "
        "a comparison's order-statistic confidence interval for the median, a range over seeds for "
        "time to target (not a confidence interval), or an effect's own range.\n\n"
        + board.to_markdown() + "\n![measured effects](scoreboard.png)\n"
    )
    (build / "readings.md").write_text(readings_page(build, notebooks))
    print(f"\nwrote {report.relative_to(ROOT)}, {chart.relative_to(ROOT)} and build/readings.md (every reading "
          "beside its numbers)")
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

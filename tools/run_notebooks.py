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
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import course_utils as cu  # noqa: E402


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


def run_notebook(src: Path, build: Path, timeout: int) -> tuple[bool, float, str]:
    """Execute ``src`` into ``build/<slug>/``; return (ok, seconds, error summary)."""
    # the Jupyter stack is needed only here: choosing lessons, and `make reference` without a GPU, work without it
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    out_dir = build / src.parent.name
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(src, as_version=4)
    # IPC sockets: the kernel is local, and ipykernel warns about unencrypted TCP otherwise
    km = KernelManager(kernel_name="python3", transport="ipc",
                       connection_file=str(Path(tempfile.mkdtemp(prefix="kernel-")) / "kernel.json"))
    client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(out_dir)}})
    t0 = time.perf_counter()
    error = ""
    try:
        client.execute()
    except CellExecutionError as e:
        error = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    except Exception as e:  # a dead kernel or a timeout: report it, go on with the next lesson
        error = f"{type(e).__name__}: {e}"
    finally:
        if km.has_kernel:  # a client given its kernel manager leaves the kernel to its owner
            km.shutdown_kernel(now=True)
        shutil.rmtree(Path(km.connection_file).parent, ignore_errors=True)
    seconds = time.perf_counter() - t0
    nbformat.write(nb, out_dir / src.name)
    return not error, seconds, error


def main(argv: list[str] | None = None) -> int:
    """Run every lesson (or those named), print one line per notebook, then the scoreboard; 1 if any failed."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lessons", nargs="+", metavar="NN",
                   help="only the lessons whose folder starts so (e.g. 02 17); all when omitted")
    args = p.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
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
    board = cu.scoreboard(cu.results.results_dir())
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
    print(f"\nwrote {report.relative_to(ROOT)} and {chart.relative_to(ROOT)}")
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run committed answers — wrong ones (mutants) and right ones (alternatives) — against a lesson's test cells.

Each exercise's answer cell is swapped for a file of ``tests/mutants/<lesson>/``; the exercise's
test cell (visible and hidden tests, the code nbgrader would inject) then runs on it in a plain
Python process, without nbgrader or a kernel. A file's name says what must happen:

- ``ex<N>_wrong_<what>.py``: a plausible wrong answer; the test cell must fail (raise).
- ``ex<N>_right_<what>.py``: a correct answer written differently from the solution; it must pass.

A file may start with comment lines that the suite reads: ``# kind: <one of KINDS>`` (required
for a wrong answer: which kind of hole it probes) and ``# fails-with: <regex>`` (optional: the
failure message must match, so that the test names the mistake, not a crash it caused).

How a lesson is run, once per lesson: its code cells execute in order in one namespace (the
solution's answer cells for every exercise, the lesson's own cells between them), except the
cells tagged ``mutants-skip`` (measurements the tests do not need). Just before an exercise's
answer cell the process forks once per variant: the child runs the variant in place of the
answer, then the cells up to the test cell, then the test cell, and reports; the parent goes on
with the solution. Forking keeps the cost of a variant at the cost of its own cells; a variant
that breaks global state (anomaly mode left on, the garbage collector off) breaks only its child.

    python tests/mutants/run.py 13_debug_tools_off            # a table, exit 1 on any surprise
    python tests/mutants/run.py 13_debug_tools_off --json     # one JSON object per variant
    python tests/mutants/run.py 00_measuring 01_lr_schedules --jobs 2   # lessons in forked children

Run in the smoke profile on one thread (``tests/test_mutants.py`` sets both).
"""

from __future__ import annotations

import argparse
import io
import json
import linecache
import os
import re
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SKIP_TAG = "mutants-skip"
TIMEOUT_S = 120  # nbgrader_config.py's per-cell limit: a variant that runs longer fails there too
NAME = re.compile(r"^(ex\d+)_(wrong|right)_[a-z0-9_]+\.py$")
#: The kinds of wrong answer (issue: tests that cannot be fooled), one per ``# kind:`` line.
KINDS = {
    "state": "global or caller state not restored (on return, on raise, or when it was already set)",
    "validation": "validates part of the input, or accepts an invalid one",
    "inputs": "right only on inputs that agree with a wrong assumption (odd lengths, one world size, ...)",
    "device": "the device or dtype from the machine or a constant, not from the input",
    "dtype": "dtypes and magnitudes: overflow, integer inputs, the wrong return type",
    "work": "extra work the output does not show: host syncs, kept graphs, extra passes or copies",
    "spy": "calls the function it re-implements by another route, or skips the tool it must use",
    "structure": "does not walk the structure far enough (nested modules, every class, every group)",
    "logic": "a plain wrong result: an off-by-one, a wrong formula, a missing case",
}


@dataclass
class Outcome:
    """What one variant did against its exercise's test cell."""

    lesson: str
    exercise: str
    file: str
    expect: str  # "fail" (a wrong answer) or "pass" (a right one)
    passed: bool
    error: str = ""
    message: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether it did what its name says: a wrong answer failed, a right one passed."""
        return self.passed == (self.expect == "pass")


def header(text: str, key: str) -> str | None:
    """The value of a leading ``# key: value`` comment line, or None."""
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line[1:].strip().lower().startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return None


def variants(lesson: str, root: Path = HERE) -> dict[str, list[Path]]:
    """The variants of a lesson under ``root`` (the committed ones by default), by exercise, sorted."""
    out: dict[str, list[Path]] = {}
    for path in sorted((root / lesson).glob("*.py")):
        m = NAME.match(path.name)
        if not m:
            raise ValueError(f"{path}: name it ex<N>_wrong_<what>.py or ex<N>_right_<what>.py")
        out.setdefault(m.group(1), []).append(path)
    return out


def notebook(lesson: str) -> Any:
    """The lesson's solution notebook."""
    import nbformat

    return nbformat.read(ROOT / "solutions" / lesson / f"{lesson}.ipynb", as_version=4)


def grade_id(cell: Any) -> str:
    """The cell's nbgrader grade_id, or ''."""
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def python(source: str) -> str:
    """A cell's source as plain Python (IPython magics become ``get_ipython()`` calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


class _NoIPython:
    """``get_ipython()`` outside IPython: every magic is a no-op (only the setup's Colab install has one)."""

    def run_line_magic(self, *args: object, **kwargs: object) -> None:
        return None

    run_cell_magic = system = run_line_magic


def _run(code: str, name: str, ns: dict[str, Any]) -> None:
    """Execute one cell in ``ns``; its source is kept in ``linecache``, as IPython keeps it for ``inspect``."""
    source, filename = python(code), f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), ns)


def _child(ns: dict[str, Any], cells: list[tuple[str, str]], write: int) -> None:
    """In the forked child: run the cells, report pass or fail on the pipe, and exit."""
    out = io.StringIO()
    sys.stdout = sys.stderr = out
    result: dict[str, Any] = {"passed": True}
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError(f"over {TIMEOUT_S} s")))
    signal.alarm(TIMEOUT_S)
    try:
        import torch

        # a fresh intra-op thread pool in the child: after a Dynamo trace in the parent, forked autograd
        # threads otherwise race on the inherited one and abort the process (about 1 fork in 20)
        torch.set_num_threads(torch.get_num_threads())
        for name, code in cells:
            _run(code, name, ns)
    except BaseException as e:  # noqa: BLE001 - any failure of a test cell fails the variant
        where = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith("<")]
        result = {"passed": False, "error": type(e).__name__, "message": str(e)[:600],
                  "where": f"{where[-1].filename}:{where[-1].lineno}" if where else "",
                  "output": out.getvalue()[-600:]}
    signal.alarm(0)
    os.write(write, json.dumps(result).encode())
    os._exit(0)


def _fork(ns: dict[str, Any], cells: list[tuple[str, str]]) -> dict[str, Any]:
    """Run ``cells`` in a forked copy of this process; what it reported (a crash is a failure)."""
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _child(ns, cells, write)
        finally:
            os._exit(3)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if chunks:
        return json.loads(b"".join(chunks))
    return {"passed": False, "error": "crash", "message": f"the process died (wait status {status})"}


PROBE = "import torch\n(torch.ones(2, requires_grad=True) * 2).sum().backward()"


def run_lesson(lesson: str, only: str | None = None, root: Path = HERE) -> list[Outcome]:
    """Every variant of ``lesson`` (or of one exercise, ``only="ex2"``) against its test cell.

    The solution itself runs first at each exercise, as the variant ``solution`` (it must pass:
    this proves the harness). Test cells run only in the children: a test cell may leave the
    process unable to fork autograd work (``torch.compile``'s backward does), and it defines
    nothing a later cell needs.
    """
    found = variants(lesson, root)
    nb = notebook(lesson)
    code = [c for c in nb.cells if c.cell_type == "code"]
    ids = [grade_id(c) for c in code]
    ns: dict[str, Any] = {"__name__": "__main__", "get_ipython": _NoIPython}
    outcomes: list[Outcome] = []
    todo = [g.removesuffix("_answer") for g in ids if g.endswith("_answer") and g.startswith("ex")
            and (only is None or g.removesuffix("_answer") == only)]
    for i, cell in enumerate(code):
        if not todo:
            break
        gid = ids[i]
        ex = gid.removesuffix("_answer")
        if gid.endswith("_answer") and ex == todo[0]:
            todo.pop(0)
            tests = ids.index(f"{ex}_tests")
            between = [(ids[j] or f"cell {j}", code[j].source) for j in range(i + 1, tests + 1)
                       if SKIP_TAG not in code[j].metadata.get("tags", [])]
            runs = [("solution", cell.source)] + [(p.name, p.read_text()) for p in found.get(ex, [])]
            for name, source in runs:
                start = time.perf_counter()
                report = _fork(ns, [(name, source)] + between)
                outcomes.append(Outcome(lesson, ex, name, "fail" if "_wrong_" in name else "pass",
                                        report["passed"], report.get("error", ""),
                                        " ".join(str(report.get("message", "")).split()) +
                                        (f" [{report['where']}]" if report.get("where") else ""),
                                        round(time.perf_counter() - start, 2)))
        if SKIP_TAG in cell.metadata.get("tags", []) or gid.endswith("_tests"):
            continue
        _run(cell.source, gid or f"cell {i}", ns)
        if todo and not _fork(ns, [("fork probe", PROBE)])["passed"]:
            raise RuntimeError(f"{lesson}: after code cell {i} a forked process cannot run backward (autograd "
                               f"threads started before the fork): tag that cell {SKIP_TAG!r} if the tests do "
                               "not need it, or move its work after the last test cell")
    return outcomes


def _lesson_child(lesson: str, only: str | None, root: Path, out: Path) -> None:
    """In a child forked per lesson: run it, write its outcomes as JSON lines to ``out``, exit."""
    sys.stdout = sys.stderr = io.StringIO()  # the lesson's own prints and warnings stay out of the report
    try:
        rows = [asdict(o) for o in run_lesson(lesson, only, root)]
    except BaseException as e:  # noqa: BLE001 - reported as the lesson's failure
        rows = [asdict(Outcome(lesson, "-", "(the runner)", "pass", False, type(e).__name__,
                               f"{e} | {traceback.format_exc()[-1500:]}"))]
    out.write_text("\n".join(json.dumps(r) for r in rows))


def run_lessons(lessons: list[str], only: str | None = None, root: Path = HERE, jobs: int = 2) -> list[dict[str, Any]]:
    """Several lessons, ``jobs`` at a time, each in a child forked from this process (torch is imported once)."""
    import tempfile

    import nbformat  # noqa: F401 - imported once, before the forks
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401 - a TorchFunctionMode (cu.spy's "aten::" targets) imports it on first use: ~3 s
    from IPython.core.inputtransformer2 import TransformerManager  # noqa: F401

    import course_utils  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        files = {lesson: Path(tmp) / f"{lesson}.jsonl" for lesson in lessons}
        waiting, running = list(lessons), 0
        while waiting or running:
            if waiting and running < jobs:
                lesson = waiting.pop(0)
                sys.stdout.flush()
                if os.fork() == 0:
                    try:
                        _lesson_child(lesson, only, root, files[lesson])
                    finally:
                        os._exit(0)
                running += 1
                continue
            os.wait()
            running -= 1
        rows = []
        for lesson, path in files.items():
            text = path.read_text() if path.exists() else ""
            rows += [json.loads(line) for line in text.splitlines()] or [asdict(Outcome(
                lesson, "-", "(the runner)", "pass", False, "crash", "the lesson's process died"))]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command line: run lessons' variants, print a table (or JSON lines); exit 1 on a surprise."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="+", help="folders of solutions/, e.g. 13_debug_tools_off")
    parser.add_argument("--exercise", help="only this exercise, e.g. ex2")
    parser.add_argument("--json", action="store_true", help="one JSON object per variant")
    parser.add_argument("--dir", type=Path, default=HERE, help="where the lesson folders of variants are")
    parser.add_argument("--jobs", type=int, default=2, help="lessons at once")
    args = parser.parse_args(argv)
    os.environ.setdefault("COURSE_PROFILE", "smoke")
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.path.insert(0, str(ROOT))
    rows = run_lessons(args.lessons, args.exercise, args.dir, args.jobs)
    for r in rows:
        o = Outcome(**r)
        if args.json:
            print(json.dumps(r))
        else:
            mark = "ok " if o.ok else "BAD"
            print(f"{mark} {o.lesson[:2]} {o.file:<40} {'passed' if o.passed else 'failed'} {o.seconds:6.1f}s  "
                  f"{o.message[:150]}")
    return 0 if all(Outcome(**r).ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
